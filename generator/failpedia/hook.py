"""``import failpedia.hook``: print the catalog's entries matching an exception that ends
the script (or a thread) under its traceback, which stays as Python prints it, as does
the exit status. ``failpedia.hook.install(index=...)`` names the index to read;
``uninstall()`` puts the previous hooks back."""

from failpedia.integrations.excepthook import install, uninstall

__all__ = ["install", "uninstall"]
MAY_IMPORT = ("integrations",)

install()
