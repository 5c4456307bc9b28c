"""The catalog: the entry model, YAML with line numbers, reading files a pull request
brings (bounded, regular files only), conversion, what Markdown text and web addresses
may hold, validation (with the names the site reserves; each entry file's own check kept
in memory while nothing it read changes), the checked catalog and the drafts it leaves
out, the registry of retired ids (renamed and merged entries), problems, the reproducer's
fix and check regions, the JSON Schema, scaffolding, and the compilation of the signature
index.

May import: ``failpedia.signatures``. Callers pass the folders in; the catalog does not
read project settings.
"""
