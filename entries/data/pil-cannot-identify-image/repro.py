"""Reproducer for pil-cannot-identify-image.

`python repro.py`: a dataset of 8 PNG images lives in a Git repository that stores images
with Git LFS. It was cloned where `git-lfs` is not installed, so each image file in the
checkout is a Git LFS pointer: three lines of text naming the object's SHA-256 and size.
A DataLoader with two workers opens the files with Pillow, which recognises no image
format in them and raises `PIL.UnidentifiedImageError: cannot identify image file
'...png'`; the main process re-raises it.
`python repro.py --fixed`: before training, every pointer file is replaced by its object,
as `git lfs pull` does (here from the repository's local object store,
`.git/lfs/objects/<oid[0:2]>/<oid[2:4]>/<oid>`, with the SHA-256 and size checked against
the pointer). Every sample then decodes, and each equals the pixels it was written from.
"""

import hashlib
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
COUNT = 8
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"


class PngFolder(Dataset):
    def __init__(self, root: str):
        self.files = sorted(os.path.join(root, name) for name in os.listdir(root))

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> torch.Tensor:
        with Image.open(self.files[index]) as image:
            return torch.from_numpy(np.asarray(image.convert("RGB")).copy())


def commit_with_lfs(repo: str, images: str, pixels: list[np.ndarray]) -> None:
    """Write the images as a Git LFS clone without git-lfs leaves them: objects in the
    store, pointer files in the checkout."""
    source = os.path.join(repo, "source")
    os.makedirs(source)
    os.makedirs(images)
    for i, array in enumerate(pixels):
        name = f"{i:03d}.png"
        Image.fromarray(array, "RGB").save(os.path.join(source, name))
        with open(os.path.join(source, name), "rb") as handle:
            content = handle.read()
        oid = hashlib.sha256(content).hexdigest()
        store = os.path.join(repo, ".git", "lfs", "objects", oid[:2], oid[2:4])
        os.makedirs(store, exist_ok=True)
        with open(os.path.join(store, oid), "wb") as handle:
            handle.write(content)
        with open(os.path.join(images, name), "wb") as handle:
            handle.write(LFS_POINTER + f"oid sha256:{oid}\nsize {len(content)}\n".encode())
    shutil.rmtree(source)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as work:
        repo = os.path.join(work, "dataset-repo")
        images = os.path.join(repo, "images")
        generator = np.random.default_rng(0)
        pixels = [generator.integers(0, 256, (24, 32, 3), dtype=np.uint8) for _ in range(COUNT)]
        commit_with_lfs(repo, images, pixels)

        if FIXED:
# --- fix: start
            # Replace each Git LFS pointer by its object, as `git lfs pull` does, checking
            # the object's SHA-256 and size against the pointer.
            for path in PngFolder(images).files:
                with open(path, "rb") as handle:
                    head = handle.read(200)
                if not head.startswith(LFS_POINTER):
                    continue
                fields = dict(line.split(" ", 1) for line in head.decode().splitlines()[1:])
                oid = fields["oid"].removeprefix("sha256:")
                with open(os.path.join(repo, ".git", "lfs", "objects", oid[:2], oid[2:4], oid), "rb") as handle:
                    content = handle.read()
                assert hashlib.sha256(content).hexdigest() == oid and len(content) == int(fields["size"])
                with open(path, "wb") as handle:
                    handle.write(content)
                print(f"{os.path.basename(path)}: Git LFS pointer replaced by its object")
# --- fix: end

        loader = DataLoader(PngFolder(images), batch_size=4, num_workers=2)
        batch = torch.cat(list(loader))
        print("decoded images:", tuple(batch.shape))

        # --- check: start
        assert len(batch) == COUNT  # every sample, none skipped
        for i, image in enumerate(batch):
            assert torch.equal(image, torch.from_numpy(pixels[i])), i  # the pixels written
        print(f"check: all {COUNT} images decode and equal the pixels they were written from")
        # --- check: end
