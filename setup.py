"""Build hook: compile the signature index and the entry texts into the package.

A wheel built from the repository then carries ``failpedia/data/signatures.json``,
``entries.json`` and ``nearest.json``, so ``failpedia diagnose`` and ``failpedia explain``
work on a machine that has only the wheel. Editable installs compile the checkout's entries
(``failpedia.project``) instead.
"""

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithSignatureIndex(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        sys.path.insert(0, str(ROOT / "generator"))
        from failpedia.project.package_data import build_package_data

        build_package_data(ROOT, Path(self.build_lib) / "failpedia" / "data")


# ANSI stripping and newline counting in C (see the file's header). Optional: where it
# cannot be compiled the package still installs and diagnose does both in Python, slower.
LOGBYTES = Extension(
    "failpedia.diagnose._logbytes",
    sources=["generator/failpedia/diagnose/_logbytes.c"],
    optional=True,
)

setup(cmdclass={"build_py": BuildWithSignatureIndex}, ext_modules=[LOGBYTES])
