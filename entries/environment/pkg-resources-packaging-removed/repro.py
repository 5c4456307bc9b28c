"""Reproducer for pkg-resources-packaging-removed.

torch 1.8 to 2.1 compare CUDA and compiler versions in `torch/utils/cpp_extension.py`
with the copy of `packaging` that setuptools vendored into `pkg_resources`, imported at
the top of the module (line 28 in torch 2.1.0):

    from pkg_resources import packaging  # type: ignore[attr-defined]

`pkg_resources` never declared `packaging` as part of its API; it was a module attribute
only because `pkg_resources/__init__.py` ran `from pkg_resources.extern import packaging`.
setuptools 70.0.0 imports the submodules under private names instead
(`from pkg_resources.extern.packaging import version as _packaging_version`), so the
import fails with `ImportError: cannot import name 'packaging' from 'pkg_resources'`
whenever anything imports `torch.utils.cpp_extension` (extension builds, and libraries
that import it at start).

What is carried: the installed torch (2.13.0) no longer has that line, so this script
runs torch 2.1.0's import and its CUDA version checks itself (lines 28 and 2345-2347,
applied to a list of CUDA releases, as the CPU build has no CUDA version), under
setuptools 70.0.0, installed apart (reproducer.private_requirements) and first on the
import path. setuptools' `pkg_resources` and the failing import are real.

`python repro.py`: the import fails.
`python repro.py --fixed`: the versions are parsed with `Version` from
`torch.torch_version`, as torch 2.2's cpp_extension does; setuptools 70 stays. The check
asserts each comparison equals the comparison of the release numbers as integer tuples.
"""

import os
import sys

FIXED = "--fixed" in sys.argv[1:]

# setuptools 70.0.0, installed apart (reproducer.private_requirements), first on the path.
SETUPTOOLS_70 = os.path.join(sys.prefix, "failpedia-private", "setuptools-70.0.0")
sys.path.insert(0, SETUPTOOLS_70)


def parse_version(text: str):  # type: ignore[no-untyped-def]
    """torch 1.8 to 2.1: torch/utils/cpp_extension.py's version parser."""
    from pkg_resources import packaging  # type: ignore[attr-defined]

    return packaging.version.parse(text)


if FIXED:
    # --- fix: start
    # Parse versions with the `packaging` torch vendors (torch 2.2 and later's
    # cpp_extension: `from torch.torch_version import TorchVersion, Version`), or with
    # `from packaging.version import Version`; never through pkg_resources.
    from torch.torch_version import Version

    parse_version = Version
    # --- fix: end

import pkg_resources  # noqa: E402

print("pkg_resources from setuptools", pkg_resources.require("setuptools")[0].version)

# torch 2.1.0 cpp_extension.py lines 2345-2347: CUDA 11.0 and later get -std=c++17.
CUDA_RELEASES = ["10.2", "11.0", "11.3", "11.8", "12.1", "12.10"]
required_cuda_version = parse_version("11.0")
at_least_11 = {cuda: parse_version(cuda) >= required_cuda_version for cuda in CUDA_RELEASES}
print("CUDA releases at or after 11.0:", [cuda for cuda, ok in at_least_11.items() if ok])

# --- check: start
reference = {cuda: tuple(int(p) for p in cuda.split(".")) >= (11, 0) for cuda in CUDA_RELEASES}
assert at_least_11 == reference, (at_least_11, reference)
assert parse_version("12.10") > parse_version("12.9")  # numeric, not string, order
print("check: each CUDA release compares with 11.0 as its integer tuple does")
# --- check: end
