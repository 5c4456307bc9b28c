"""Reproducer for opencv-libgl-missing.

`python repro.py`: a data-loading step runs in a container without the system's OpenGL
library, `libGL.so.1` (slim Docker images, most CI and cluster base images). The machines
this entry is proved on have it (a browser installed beside it pulls it in), so the step
runs under bubblewrap with `libGL.so.1` removed from the system library folder: every
other file of that folder is still there, and nothing else is changed. `opencv-python` (the
wheel with OpenCV's GUI modules, built against OpenGL; installed apart, in
`failpedia-private/opencv-python-5.1.0.95`) is first on the import path, and `import cv2`
fails in the dynamic loader: `ImportError: libGL.so.1: cannot open shared object file: No
such file or directory`.
`python repro.py --fixed`: the step imports `opencv-python-headless` instead (the same
OpenCV without the GUI modules, which needs no libGL), in the same container. The check
compares the images it produced (resized with `INTER_AREA`, converted BGR to RGB) with a
reference computed with NumPy.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

FIXED = "--fixed" in sys.argv[1:]
SYSTEM_LIBRARIES = "/usr/lib/x86_64-linux-gnu"

# The package the step was installed with: opencv-python, the wheel with GUI support. It is
# installed apart (reproducer.private_requirements), in this folder under the prefix.
OPENCV_WITH_GUI = os.path.join(sys.prefix, "failpedia-private", "opencv-python-5.1.0.95")
sys.path.insert(0, OPENCV_WITH_GUI)

if FIXED:
    # --- fix: start
    # Use opencv-python-headless, which has no GUI modules and needs no libGL:
    # `pip uninstall -y opencv-python && pip install opencv-python-headless` (here: take
    # the opencv-python folder off the path, so `import cv2` finds the headless wheel).
    sys.path.remove(OPENCV_WITH_GUI)
    # --- fix: end


def step(folder: str) -> None:
    """The data-loading step: halve each image and convert it to RGB, as a transform does."""
    import cv2

    print("cv2", cv2.__version__, "from", os.path.dirname(os.path.dirname(cv2.__file__)))
    images = np.load(os.path.join(folder, "images.npy"))
    out = [cv2.cvtColor(cv2.resize(image, (16, 12), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB) for image in images]
    np.save(os.path.join(folder, "processed.npy"), np.stack(out))


def without_libgl(command: list[str], folder: str) -> None:
    """Run `command` where the system library folder lacks libGL.so* and nothing else."""
    hidden = [name for name in os.listdir(SYSTEM_LIBRARIES) if name.startswith("libGL.so")]
    print("hidden from the step:", ", ".join(sorted(hidden)) or "nothing (no libGL here)")
    args = ["bwrap", "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    args += ["--bind", folder, folder, "--tmpfs", "/mnt", "--dir", "/mnt/system"]
    args += ["--ro-bind", SYSTEM_LIBRARIES, "/mnt/system", "--tmpfs", SYSTEM_LIBRARIES]
    for name in sorted(os.listdir(SYSTEM_LIBRARIES)):
        if name not in hidden:
            args += ["--symlink", f"/mnt/system/{name}", f"{SYSTEM_LIBRARIES}/{name}"]
    result = subprocess.run([*args, *command])
    if result.returncode != 0:
        raise SystemExit(result.returncode)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--step"]:
        step(sys.argv[2])
        raise SystemExit(0)
    folder = tempfile.mkdtemp()
    generator = np.random.default_rng(0)
    images = generator.integers(0, 256, (4, 24, 32, 3), dtype=np.uint8)  # BGR, as cv2 reads
    np.save(os.path.join(folder, "images.npy"), images)
    without_libgl([sys.executable, __file__, "--step", folder, *sys.argv[1:]], folder)
    processed = np.load(os.path.join(folder, "processed.npy"))
    print("processed images:", processed.shape)

    # --- check: start
    blocks = images.reshape(4, 12, 2, 16, 2, 3).astype(np.float64).mean(axis=(2, 4))
    reference = np.floor(blocks + 0.5).astype(np.uint8)[..., ::-1]  # 2x2 means, RGB order
    assert processed.shape == reference.shape
    assert np.array_equal(processed, reference)
    print("check: every image equals the NumPy reference (2x2 block means, channels in RGB order)")
    # --- check: end
    shutil.rmtree(folder)
