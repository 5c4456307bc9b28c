"""The mkdocs plugin (``plugin``, thin; its options in ``plugin_config``), the one build of
the generated pages that the plugin and ``failpedia render`` share (``pipeline``),
rendering (entry pages kept between rebuilds: ``page_cache``), the preview in ``mkdocs
serve`` (``preview``, drafts' pages in ``draft_pages``, pages that tell ``--dirty`` what
changed in ``generated_pages``), Markdown filters (``markdown``: entry text escaped where
it is published), the check of each generated page's HTML (``page_guard``), names for the
task-list checkboxes ("Confirm it"; ``accessible_html``, a Markdown extension in
mkdocs.yml), proof and coverage for pages, links to the issue forms (``issue_links``),
the pages at retired ids' old addresses (``redirects``), what search engines read
(``structured_data``: schema.org JSON-LD of entry pages; ``commit_dates``: each page's
last commit, for the sitemap's lastmod), and the site search's full-text index made
smaller once the theme's search plugin has written it (``search_index``).

Of ``verify`` it reads only ``results`` (which also reads records), never the runner:
pages show proofs without loading it.
"""

MAY_IMPORT = ("catalog", "signatures", "settings", "verify.results")
