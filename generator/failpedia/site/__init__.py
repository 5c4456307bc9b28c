"""The site: the mkdocs plugin (a thin adapter), rendering pages with the templates
(entry pages kept between the rebuilds of ``mkdocs serve``), Markdown filters, what
verification records say on pages (proof and coverage), and the preview of drafts in
``mkdocs serve``.

May import: ``failpedia.catalog``, ``failpedia.signatures``, ``failpedia.settings``, and
of ``failpedia.verify`` only ``results`` (never the runner).
"""
