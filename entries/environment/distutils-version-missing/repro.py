"""Reproducer for distutils-version-missing.

torch 1.9.0 to 1.10.2 check the TensorBoard release when `torch.utils.tensorboard` is
imported (`from torch.utils.tensorboard import SummaryWriter`), with these lines at the top
of `torch/utils/tensorboard/__init__.py`:

    import tensorboard
    from setuptools import distutils

    LooseVersion = distutils.version.LooseVersion

    if not hasattr(tensorboard, '__version__') or LooseVersion(tensorboard.__version__) < LooseVersion('1.15'):
        raise ImportError('TensorBoard logging requires TensorBoard version 1.15 or above')

`distutils.version` is a submodule: it is an attribute of the `distutils` package only
once something has imported it. setuptools 59.5.0 and older did (`setuptools/dist.py`
imported `StrictVersion` from it); setuptools 59.6.0 stopped, and line 4 fails with
`AttributeError: module 'distutils' has no attribute 'version'`.

What is carried: the installed torch (2.13.0) no longer has those lines, and TensorBoard
is not installed, so this script runs torch 1.10's lines 2 to 4 itself, under the
installed setuptools 84.2.1, and applies the version check to a list of TensorBoard
release numbers instead of the installed TensorBoard's. The import, setuptools'
`distutils` and the failing attribute lookup are real.

`python repro.py`: line 4 raises the AttributeError.
`python repro.py --fixed`: `distutils.version` is imported explicitly first (torch 1.11
moved to `from distutils.version import LooseVersion` for the same reason); the check
compares each release with 1.15 and asserts the result equals the comparison of the
release numbers as tuples of integers.
"""

import sys

FIXED = "--fixed" in sys.argv[1:]

if FIXED:
    # --- fix: start
    # Import the submodule before torch.utils.tensorboard reads it as an attribute (or
    # upgrade to torch >= 1.11, or pin setuptools==59.5.0).
    import distutils.version
    # --- fix: end

# torch 1.9.0 to 1.10.2, torch/utils/tensorboard/__init__.py, lines 2 to 4.
from setuptools import distutils  # noqa: E402

LooseVersion = distutils.version.LooseVersion

# torch's check (line 6), applied to TensorBoard releases.
RELEASES = ["1.14.0", "1.15.0", "2.0.2", "2.4.1", "2.8.0", "2.10.1", "2.16.2"]
too_old = {release: LooseVersion(release) < LooseVersion("1.15") for release in RELEASES}
print("TensorBoard releases torch 1.10 refuses:", [r for r, old in too_old.items() if old])

# --- check: start
reference = {
    release: tuple(int(part) for part in release.split(".")) < (1, 15) for release in RELEASES
}
assert too_old == reference, (too_old, reference)
assert [r for r, old in too_old.items() if old] == ["1.14.0"]
print("check: the version check refuses exactly the releases before 1.15, as tuple comparison does")
# --- check: end
