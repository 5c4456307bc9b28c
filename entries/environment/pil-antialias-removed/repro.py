"""Reproducer for pil-antialias-removed.

`python repro.py`: a dataset's transform, written for Pillow 9, shrinks each image with
`image.resize(size, Image.ANTIALIAS)`. Pillow 10 removed the `ANTIALIAS` constant (and
the environment has Pillow 12.3.0), so the first sample raises `AttributeError: module
'PIL.Image' has no attribute 'ANTIALIAS'`.
`python repro.py --fixed`: the transform names the same filter by its current name,
`Image.Resampling.LANCZOS`; every image is resized, and each equals the resize with
filter 1, the value `ANTIALIAS` had in Pillow 9 (ANTIALIAS = LANCZOS = 1).
"""

import sys

import PIL
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
SIZE = (32, 24)


def random_image(seed: int) -> Image.Image:
    generator = torch.Generator().manual_seed(seed)
    pixels = torch.randint(0, 256, (96, 128, 3), dtype=torch.uint8, generator=generator)
    return Image.frombytes("RGB", (128, 96), bytes(pixels.flatten().tolist()))


def to_tensor(image: Image.Image) -> torch.Tensor:
    width, height = image.size
    return torch.frombuffer(bytearray(image.tobytes()), dtype=torch.uint8).view(height, width, 3)


def shrink(image: Image.Image) -> Image.Image:
    return image.resize(SIZE, Image.ANTIALIAS)  # written for Pillow 9


if FIXED:
# --- fix: start
    def shrink(image: Image.Image) -> Image.Image:
        return image.resize(SIZE, Image.Resampling.LANCZOS)  # ANTIALIAS's name since Pillow 9.1
# --- fix: end


class Thumbnails(Dataset):
    def __len__(self) -> int:
        return 6

    def __getitem__(self, index: int) -> torch.Tensor:
        return to_tensor(shrink(random_image(index)))


print("Pillow", PIL.__version__)
thumbnails = torch.cat(list(DataLoader(Thumbnails(), batch_size=3)))
print("thumbnails:", tuple(thumbnails.shape))

# --- check: start
assert len(thumbnails) == 6  # every image resized
for index, thumbnail in enumerate(thumbnails):
    reference = to_tensor(random_image(index).resize(SIZE, resample=1))  # Pillow 9's ANTIALIAS
    assert torch.equal(thumbnail, reference), index
    bicubic = to_tensor(random_image(index).resize(SIZE, resample=3))  # the default filter
    assert not torch.equal(thumbnail, bicubic), index  # the filter was not silently changed
print("check: all 6 thumbnails equal the Lanczos (ANTIALIAS) resize of their image")
# --- check: end
