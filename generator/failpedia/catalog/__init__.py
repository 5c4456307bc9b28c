"""The model, YAML with line numbers (``yaml_source``), reading entry files
(``bounded_read``: regular files inside their folder, of a bounded size), conversion, what
Markdown fields and URLs may hold (``markdown_code``, ``markdown_check``, ``web_url``),
checking one entry file (``entry_check``, its result kept while nothing it read changes:
``entry_cache``), validation of the whole catalog and the drafts it leaves out
(``validate``), the names ids may not take (``site_names``), the catalog, problems, fix
regions, the JSON Schema, scaffolding, compiling the signature index (``index_build``),
what a signature's release ranges mean and must say (``release_rules``), when each wording
was added, changed or removed (``release_history``), the registry of retired ids
(``retired``).

Callers pass the folders in; the catalog does not read project settings.
"""

MAY_IMPORT = ("signatures",)
