"""The ``failpedia`` command: the parser (``main``) and one module per command group,
each imported only when its command runs.

May import: everything.
"""
