"""Reproducer for opencv-image-not-loaded.

`python repro.py`: a dataset's list file names its images relative to the dataset folder
(`images/000.png`), as most annotation files do, and the Dataset passes each name to
`cv2.imread` as it is. The script runs from another folder, so `cv2.imread` finds no file,
prints a warning and returns None instead of raising; the next OpenCV call, `cv2.resize`,
raises `cv2.error: ... (-215:Assertion failed) !ssize.empty() in function 'resize'`
(`cv2.cvtColor` first would raise the same with `!_src.empty()`).
`python repro.py --fixed`: the reader joins each name to the dataset folder and raises an
error naming the file if `cv2.imread` still returns None; every image then loads, and the
check compares each sample with a reference computed with NumPy from the pixels the
images were written from (by Pillow): the mean of each 2x2 block, in RGB order.
"""

import os
import sys
import tempfile

import cv2
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
COUNT = 6


def read_as_listed(root: str, name: str) -> np.ndarray:
    """The reader as written: the listed name as it is, relative to the working folder."""
    return cv2.imread(name)


read_image = read_as_listed
if FIXED:
# --- fix: start
    def read_from_root(root: str, name: str) -> np.ndarray:
        """Resolve the listed name against the dataset folder; fail with the file's path."""
        path = os.path.join(root, name)
        image = cv2.imread(path)
        if image is None:  # imread returns None for a missing or unreadable file
            raise FileNotFoundError(f"cv2.imread could not read {path}")
        return image

    read_image = read_from_root
# --- fix: end


class ListedImages(Dataset):
    """Images named, one per line, in `train.txt`, halved in size, as RGB CHW uint8 tensors."""

    def __init__(self, root: str):
        self.root = root
        with open(os.path.join(root, "train.txt")) as listing:
            self.names = listing.read().split()

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index: int) -> torch.Tensor:
        image = read_image(self.root, self.names[index])
        image = cv2.resize(image, (16, 12), interpolation=cv2.INTER_AREA)
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)  # OpenCV decodes to BGR
        return torch.from_numpy(image).permute(2, 0, 1)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "dataset")
        os.makedirs(os.path.join(root, "images"))
        generator = np.random.default_rng(0)
        originals = []
        for i in range(COUNT):
            pixels = generator.integers(0, 256, (24, 32, 3), dtype=np.uint8)
            Image.fromarray(pixels, "RGB").save(os.path.join(root, "images", f"{i:03d}.png"))
            originals.append(pixels)
        with open(os.path.join(root, "train.txt"), "w") as listing:
            listing.write("".join(f"images/{i:03d}.png\n" for i in range(COUNT)))

        os.chdir(work)  # the script runs from its own folder, not the dataset's
        batches = list(DataLoader(ListedImages(root), batch_size=3))
        images = torch.cat(batches)
        print("loaded images:", tuple(images.shape))

        # --- check: start
        assert len(images) == COUNT  # every listed image, none skipped
        for i, image in enumerate(images):
            blocks = originals[i].reshape(12, 2, 16, 2, 3).astype(np.float64).mean(axis=(1, 3))
            reference = torch.from_numpy(np.floor(blocks + 0.5).astype(np.uint8)).permute(2, 0, 1)
            assert torch.equal(image, reference), i  # the written pixels, halved, channels in RGB order
        print(f"check: all {COUNT} images load, and each equals the block mean of its pixels in RGB order")
        # --- check: end
