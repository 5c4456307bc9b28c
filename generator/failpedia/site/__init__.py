"""The site: the mkdocs plugin (a thin adapter), rendering pages with the templates
(entry pages kept between the rebuilds of ``mkdocs serve``), Markdown filters (entry text
placed and escaped safely), the guard that reads each generated page's HTML before it is
published, names for the controls Markdown extensions leave unnamed (a Markdown
extension of its own), what verification records say on pages (proof and coverage), the pages at
retired ids' old addresses, the preview of drafts in ``mkdocs serve``, and what search
engines read (schema.org structured data, the sitemap's dates from git).

May import: ``failpedia.catalog``, ``failpedia.signatures``, ``failpedia.settings``, and
of ``failpedia.verify`` only ``results`` (never the runner).
"""
