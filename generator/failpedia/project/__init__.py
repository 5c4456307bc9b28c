"""The project, found once for every command: where it is (``locate``: ``--root``, else
the current folder's project, else the checkout the package runs from, else the wheel's
own data), its entries folder from its settings, and its signature index (``index_source``:
a file given, the wheel's, or compiled from the project's entries and kept in the user's
cache, ``index_cache`` and ``index_compile``), and the data a wheel ships
(``package_data``, for ``setup.py``). The site's pages are built by
``site.pipeline.build_site``, the one function the mkdocs plugin and ``failpedia render``
share.

Of ``diagnose`` it reads the nearest entries of a diagnosis.
"""

MAY_IMPORT = ("settings", "catalog", "signatures", "diagnose")
