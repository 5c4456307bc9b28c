"""Reproducer for numpy2-abi-mismatch.

`python repro.py`: a training script smooths its loss curve with bottleneck's
`move_mean`. The environment has NumPy 2.4.6 (the catalog's pin) and, left from before
the upgrade to NumPy 2, bottleneck 1.3.8, whose compiled modules were built against the
NumPy 1.x C API (installed apart: reproducer.private_requirements). Importing it runs
the NumPy 1.x `import_array()` compiled into the module: NumPy 2 prints `A module that
was compiled using NumPy 1.x cannot be run in NumPy 2.4.6 as it may crash...`, the
module's import prints `AttributeError: _ARRAY_API not found`, and the import fails with
`ImportError: numpy.core.multiarray failed to import`.
`python repro.py --fixed`: the affected module is upgraded to a release built against
NumPy 2 (bottleneck 1.4.2, also installed apart; what `python -m pip install --upgrade
bottleneck` installs), NumPy 2 stays.
The check compares bottleneck's moving mean of the loss curve with the same window
mean computed by NumPy alone.
"""

import os
import sys

import numpy as np

PRIVATE = os.path.join(sys.prefix, "failpedia-private")
BUILT_FOR_NUMPY_1 = os.path.join(PRIVATE, "bottleneck-1.3.8")  # wheel built with NumPy 1.x
BUILT_FOR_NUMPY_2 = os.path.join(PRIVATE, "bottleneck-1.4.2")  # wheel built with NumPy 2
# The environment as it is: the NumPy 1.x build of bottleneck is the one installed.
sys.path.insert(0, BUILT_FOR_NUMPY_1)

FIXED = "--fixed" in sys.argv[1:]

if FIXED:
    # --- fix: start
    # Upgrade the affected module to a release built against NumPy 2:
    # `python -m pip install --upgrade bottleneck`, here its 1.4.2 in place of 1.3.8.
    # NumPy 2 stays; the other way out is `numpy<2` for every package.
    sys.path.remove(BUILT_FOR_NUMPY_1)
    sys.path.insert(0, BUILT_FOR_NUMPY_2)
    # --- fix: end

import bottleneck as bn  # noqa: E402

print(f"numpy {np.__version__}, bottleneck {bn.__version__}")

rng = np.random.default_rng(0)
losses = 2.0 * np.exp(-np.arange(200) / 60.0) + 0.05 * rng.standard_normal(200)
WINDOW = 10
smoothed = bn.move_mean(losses, window=WINDOW)
print(
    f"loss smoothed over {WINDOW} steps: first {smoothed[WINDOW - 1]:.4f}, last {smoothed[-1]:.4f}"
)

# --- check: start
windows = np.lib.stride_tricks.sliding_window_view(losses, WINDOW)
reference = np.concatenate([np.full(WINDOW - 1, np.nan), windows.mean(axis=1)])
assert smoothed.shape == losses.shape, smoothed.shape
np.testing.assert_allclose(smoothed, reference, rtol=1e-12, atol=1e-12, equal_nan=True)
print("check: bottleneck's moving mean equals NumPy's over every window")
# --- check: end
