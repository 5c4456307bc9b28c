"""The project, found once for every command and the site: where it is (``--root``, the
current folder, the checkout the package runs from, or the wheel's own data:
``locate``), its signature index (a file given, the wheel's, or compiled from the
project's entries and kept in the user's cache: ``index_source``, ``index_cache``,
``light_compile``), and its site's pages (``pages``: what ``failpedia render`` writes, built
by the function the mkdocs plugin runs).

Of ``site`` it reads the pages, of ``diagnose`` the nearest entries of a diagnosis.
"""

MAY_IMPORT = ("settings", "catalog", "signatures", "site", "diagnose")
