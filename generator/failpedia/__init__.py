"""Failpedia: an encyclopedia of ML training failures, each fix proved by a reproducer."""

__version__ = "0.1.0"
# What the package's own module may import (``docgen.layering`` reads it): the extension.
MAY_IMPORT = ("integrations",)


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext failpedia``: the entries matching an exception that ends a cell, shown
    under its traceback. Imported here only when loaded: ``import failpedia`` stays free."""
    from failpedia.integrations.ipython import load

    load(ipython)


def unload_ipython_extension(ipython: object) -> None:
    """``%unload_ext failpedia``: the shell's exception handler as it was."""
    from failpedia.integrations.ipython import unload

    unload(ipython)
