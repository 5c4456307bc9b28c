"""Reproducer for torchvision-transform-expects-pil.

`python repro.py`: a small in-memory dataset of RGB PIL images (built here, 12 x 16
pixels) feeds a DataLoader through a torchvision `Compose`. The evaluation pipeline was
written for PIL images (centre crop, nearest-neighbour resize, then `ToTensor`), and the
training pipeline was built by putting `ToTensor` and a mirrored view in front of it. The
image is a tensor from the first step on; the flip, the crop and the resize accept tensors
in torchvision 0.8 and later, but the evaluation pipeline's own `ToTensor` at the end
does not: `TypeError: pic should be PIL Image or ndarray. Got <class 'torch.Tensor'>`,
raised from the first batch.
`python repro.py --fixed`: one `Compose` in the right order: the PIL transforms first,
`ToTensor` once, last. The check recomputes the batch by hand from the PIL pixels with
NumPy: flipped by indexing, the centre cut out by indexing, every second pixel kept
(what PIL's nearest-neighbour resize takes for a factor of 2), scaled to [0, 1].

torchvision 0.28.0 is installed apart (`reproducer.private_requirements`) and put on
`sys.path` here. The wheel on the package index is built for a CUDA torch: its compiled
ops do not load into the CPU torch that reproducers run on, and `import torchvision`
then stops at its fake-kernel registration for `torchvision::nms`. Where the ops do not
load, the two op schemas it registers for (`nms`, `qnms`) are declared first; no
compiled op is used here, the transforms are pure Python.
"""

import os
import sys

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

TORCHVISION = os.path.join(sys.prefix, "failpedia-private", "torchvision-0.28.0")
sys.path.insert(0, TORCHVISION)
try:
    torch.ops.load_library(os.path.join(TORCHVISION, "torchvision", "_C.so"))
except OSError:  # a CUDA build of torchvision on a CPU torch: declare what its import registers
    _schemas = torch.library.Library("torchvision", "DEF")
    _schemas.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _schemas.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
from torchvision import transforms as T  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

N, HEIGHT, WIDTH, CROP, OUT, BATCH = 6, 12, 16, 8, 4, 3
rng = np.random.default_rng(0)
PIXELS = rng.integers(0, 256, size=(N, HEIGHT, WIDTH, 3), dtype=np.uint8)
LABELS = torch.arange(N) % 3


class TinyImages(Dataset):
    """RGB PIL images held in memory, as an image folder would hand them out."""

    def __init__(self, transform):
        self.images = [Image.fromarray(pixels) for pixels in PIXELS]
        self.transform = transform

    def __len__(self) -> int:
        return N

    def __getitem__(self, index: int):
        return self.transform(self.images[index]), LABELS[index]


# The evaluation pipeline, written for PIL images: centre crop, shrink, convert.
eval_transform = T.Compose(
    [
        T.CenterCrop(CROP),
        T.Resize((OUT, OUT), interpolation=T.InterpolationMode.NEAREST),
        T.ToTensor(),
    ]
)
# Training puts ToTensor and a mirrored view in front of it: a tensor reaches its ToTensor.
train_transform = T.Compose([T.ToTensor(), T.RandomHorizontalFlip(p=1.0), eval_transform])
if FIXED:
    # --- fix: start
    # One pipeline in the right order: every PIL transform first, ToTensor once, last.
    train_transform = T.Compose(
        [
            T.RandomHorizontalFlip(p=1.0),
            T.CenterCrop(CROP),
            T.Resize((OUT, OUT), interpolation=T.InterpolationMode.NEAREST),
            T.ToTensor(),
        ]
    )
    # --- fix: end

loader = DataLoader(TinyImages(train_transform), batch_size=BATCH, num_workers=0)
batches = list(loader)
images = torch.cat([b[0] for b in batches])
labels = torch.cat([b[1] for b in batches])
print(f"{len(batches)} batches, images {tuple(images.shape)} {images.dtype}")

# --- check: start
# Reference by hand from the PIL pixels: mirror the columns, cut the centre CROP x CROP
# (top (12 - 8) / 2 = 2, left (16 - 8) / 2 = 4), keep pixel 2 * i + 1 of each pair (PIL's
# nearest neighbour samples the centre of each output pixel), scale to [0, 1], HWC to CHW.
mirrored = PIXELS[:, :, ::-1, :]
top, left = (HEIGHT - CROP) // 2, (WIDTH - CROP) // 2
centre = mirrored[:, top : top + CROP, left : left + CROP, :]
picked = centre[:, 1::2, 1::2, :]
reference = torch.from_numpy(np.ascontiguousarray(picked.transpose(0, 3, 1, 2))).float() / 255.0
assert images.shape == (N, 3, OUT, OUT), images.shape
assert images.dtype == torch.float32 and float(images.min()) >= 0.0 and float(images.max()) <= 1.0
torch.testing.assert_close(images, reference, rtol=0, atol=1e-7)
assert torch.equal(labels, LABELS)
print(f"check: all {N} images flipped, centre-cropped, resized and scaled as computed by hand")
# --- check: end
