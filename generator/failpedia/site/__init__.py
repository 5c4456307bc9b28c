"""The site: the mkdocs plugin (a thin adapter), rendering pages with the templates,
Markdown filters (entry text placed and escaped safely), the guard that reads each
generated page's HTML before it is published, and what verification records say on
pages (proof and coverage).

May import: ``failpedia.catalog``, ``failpedia.signatures``, ``failpedia.settings``, and
of ``failpedia.verify`` only ``results`` (never the runner).
"""
