"""Reproducer for numpy-core-module-not-found.

A preprocessing job running NumPy 2 pickles its dataset statistics (per-channel mean and
standard deviation arrays, the class counts) next to the checkpoint. NumPy 2 renamed its
internal package `numpy.core` to `numpy._core`, and a pickled array records the function
that rebuilds it by module path: `numpy._core.multiarray._reconstruct`. The training
machine runs NumPy 1.25, which has no `numpy._core`, so unpickling fails with
`ModuleNotFoundError: No module named 'numpy._core'`.

What is simulated: the two machines. The pickle is written by a subprocess with the
catalog's NumPy 2 (the preprocessing machine); this process stands for the training
machine and imports an older NumPy installed apart (reproducer.private_requirements), put
at the head of `sys.path`.

`python repro.py`: the training machine, NumPy 1.25.2, loads the statistics.
`python repro.py --fixed`: the training machine runs NumPy 2 as the writer did (the
catalog's NumPy, without the old one on the path); the check compares the loaded
statistics with the values computed again here.
"""

import os
import pickle
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
PRIVATE = os.path.join(sys.prefix, "failpedia-private")

WRITER = r"""
import pickle, sys
import numpy as np
assert np.__version__.startswith("2."), np.__version__
pixels = np.arange(4 * 3 * 8, dtype=np.float32).reshape(4, 3, 8) / 7.0
stats = {"mean": pixels.mean(axis=(0, 2)), "std": pixels.std(axis=(0, 2)),
         "class_counts": np.array([120, 45, 9], dtype=np.int64)}
with open(sys.argv[1], "wb") as f:
    pickle.dump(stats, f)
"""

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "dataset_stats.pkl")
    # the preprocessing machine (NumPy 2) writes the statistics
    subprocess.run([sys.executable, "-c", WRITER, path], check=True)

    old_numpy = [os.path.join(PRIVATE, "numpy-1.25.2")]
    if FIXED:
# --- fix: start
        old_numpy = []  # the training machine upgraded to NumPy 2, like the writer
# --- fix: end
    sys.path[:0] = old_numpy
    import numpy as np

    print("training machine: NumPy", np.__version__)
    with open(path, "rb") as f:
        stats = pickle.load(f)
    print("loaded:", {key: value.tolist() for key, value in stats.items()})

# --- check: start
# reference: the statistics computed again, here, from the same pixels
pixels = np.arange(4 * 3 * 8, dtype=np.float32).reshape(4, 3, 8) / 7.0
assert np.array_equal(stats["mean"], pixels.mean(axis=(0, 2)))
assert np.array_equal(stats["std"], pixels.std(axis=(0, 2)))
assert stats["mean"].dtype == np.float32 and stats["class_counts"].dtype == np.int64
assert stats["class_counts"].tolist() == [120, 45, 9]
print("check: every statistic equals the values computed from the pixels, dtypes kept")
# --- check: end
