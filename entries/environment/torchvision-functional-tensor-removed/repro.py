"""Reproducer for torchvision-functional-tensor-removed.

`python repro.py`: a super-resolution data pipeline in basicsr's style degrades
high-resolution batches into training inputs. Its `degradations.py` imports
`rgb_to_grayscale` from `torchvision.transforms.functional_tensor`, as line 8 of
`basicsr/data/degradations.py` does in basicsr 1.4.2 (the release Real-ESRGAN, GFPGAN and
CodeFormer install). torchvision 0.15 made that module private with a deprecation warning
and 0.17 removed it, so on torchvision 0.28.0 the import fails:
`ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'`.
`python repro.py --fixed`: the same file with the import taken from the public
`torchvision.transforms.functional`; the pipeline adds gray shot (Poisson) noise to a batch.
The check compares the grayscale images with 0.2989 R + 0.587 G + 0.114 B (ITU-R 601-2)
computed by hand on the same batch and with the v2 functional's result, and the noise
with the same noise drawn by hand from that reference under the same seed.

torchvision 0.28.0 is installed apart, in `failpedia-private/torchvision-0.28.0` under the
interpreter's prefix, and put on the import path here. Where its compiled ops cannot load
(the wheel is built for a CUDA build of torch; the catalog runs the CPU build),
`import torchvision` would stop at its registration of `torchvision::nms`; the two op
schemas it registers for (`nms`, `qnms`) are then declared first, and no compiled op is
used. The pipeline package is written to a temporary folder and removed
afterwards; nothing is downloaded.
"""

import importlib
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

import torch

FIXED = "--fixed" in sys.argv[1:]

# torchvision 0.28.0, installed apart (reproducer.private_requirements).
TORCHVISION = os.path.join(sys.prefix, "failpedia-private", "torchvision-0.28.0")
sys.path.insert(0, TORCHVISION)


def import_torchvision() -> None:
    """`import torchvision`; where its compiled ops do not load (a CUDA build of
    torchvision on a CPU torch), the two op schemas its import registers for are declared
    first. No compiled op is used here: the transforms are pure Python."""
    try:
        torch.ops.load_library(os.path.join(TORCHVISION, "torchvision", "_C.so"))
    except OSError:
        schemas = torch.library.Library("torchvision", "DEF")
        schemas.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        schemas.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        import_torchvision.schemas = schemas  # kept alive: dropping it removes the ops
    import torchvision  # noqa: F401


# The pipeline's degradations, written in basicsr's style (basicsr/data/degradations.py).
DEGRADATIONS = '''
import torch
from torchvision.transforms.functional_tensor import rgb_to_grayscale


def gray_poisson_noise_pt(img, scale=1.0):
    """Shot noise shared by the three channels of each image of a (b, 3, h, w) batch."""
    gray = rgb_to_grayscale(img, num_output_channels=1)
    gray = torch.clamp((gray * 255.0).round(), 0, 255) / 255.0
    levels = torch.tensor([float(len(torch.unique(g))) for g in gray], dtype=img.dtype)
    levels = (2 ** torch.ceil(torch.log2(levels))).view(-1, 1, 1, 1)
    noise = torch.poisson(gray * levels) / levels - gray
    return noise.expand_as(img) * scale
'''


def as_installed(source: str) -> str:
    return source  # degradations.py as basicsr 1.4.2 ships it


if FIXED:
    # --- fix: start
    # basicsr/data/degradations.py, line 8: import the public function instead of the
    # module torchvision 0.17 removed (or `from torchvision.transforms.v2.functional ...`).
    OLD_IMPORT = "from torchvision.transforms.functional_tensor import rgb_to_grayscale"
    NEW_IMPORT = "from torchvision.transforms.functional import rgb_to_grayscale"

    def as_installed(source: str) -> str:
        return source.replace(OLD_IMPORT, NEW_IMPORT)

    # --- fix: end


SEED, SCALE = 0, 0.5
torch.manual_seed(0)
# A batch of 4 RGB images in [0, 1] with 8-bit levels, as a data loader gives them.
BATCH = torch.randint(0, 256, (4, 3, 16, 16)).float() / 255.0

import_torchvision()
root = Path(tempfile.mkdtemp(prefix="repro-functional-tensor-"))
degradations = noise = None
try:
    (root / "sr_data").mkdir()
    (root / "sr_data" / "__init__.py").write_text("")
    (root / "sr_data" / "degradations.py").write_text(as_installed(DEGRADATIONS))
    sys.path.insert(0, str(root))
    try:
        degradations = importlib.import_module("sr_data.degradations")
    except ImportError:
        traceback.print_exc()
    if degradations is not None:
        torch.manual_seed(SEED)
        noise = degradations.gray_poisson_noise_pt(BATCH, scale=SCALE)
        low_quality = torch.clamp(BATCH + noise, 0, 1)
        print(f"degraded batch {tuple(low_quality.shape)}, noise std {noise.std().item():.4f}")
finally:
    shutil.rmtree(root, ignore_errors=True)

# --- check: start
assert degradations is not None, "the degradations module did not import"
from torchvision.transforms.v2 import functional as F2  # noqa: E402

r, g, b = BATCH.double().unbind(dim=1)
gray_by_hand = (0.2989 * r + 0.587 * g + 0.114 * b).unsqueeze(1)  # ITU-R 601-2 luma
gray = degradations.rgb_to_grayscale(BATCH, num_output_channels=1)
assert gray.shape == (4, 1, 16, 16) and gray.dtype == BATCH.dtype, (gray.shape, gray.dtype)
torch.testing.assert_close(gray.double(), gray_by_hand, rtol=0, atol=1e-6)
torch.testing.assert_close(gray, F2.rgb_to_grayscale(BATCH, num_output_channels=1))
# The noise, drawn by hand from the by-hand gray images under the same seed.
reference = (0.2989 * BATCH[:, 0] + 0.587 * BATCH[:, 1] + 0.114 * BATCH[:, 2]).unsqueeze(1)
reference = torch.clamp((reference * 255.0).round(), 0, 255) / 255.0
levels = [2.0 ** torch.tensor(len(torch.unique(image))).log2().ceil() for image in reference]
levels = torch.stack(levels).view(-1, 1, 1, 1).float()
torch.manual_seed(SEED)
expected = (torch.poisson(reference * levels) / levels - reference).expand_as(BATCH) * SCALE
torch.testing.assert_close(noise, expected)
assert torch.equal(noise[:, 0], noise[:, 1]) and torch.equal(noise[:, 1], noise[:, 2])
print("check: grayscale equals 0.2989 R + 0.587 G + 0.114 B by hand and the v2 functional;")
print("the gray shot noise equals the noise drawn by hand from it, on all three channels")
# --- check: end
