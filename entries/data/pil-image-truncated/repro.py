"""Reproducer for pil-image-truncated.

`python repro.py`: a folder of 12 JPEG images is copied from its source (the dataset's
download, here another folder), and the copy of two files is cut short, as an
interrupted download or copy leaves them. A DataLoader with two workers decodes the
images with Pillow; the worker that reaches a cut file raises `OSError: image file is
truncated (N bytes not processed)`, which the main process re-raises.
`python repro.py --fixed`: before training, a verify pass decodes every file of the
dataset, lists the ones that fail, and copies them again from the source; every sample
then decodes, and each equals the pixels decoded from its source file.
"""

import os
import shutil
import sys
import tempfile

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
COUNT = 12


class JpegFolder(Dataset):
    def __init__(self, root: str):
        self.files = sorted(os.path.join(root, name) for name in os.listdir(root))

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> torch.Tensor:
        return decode(self.files[index])


def decode(path: str) -> torch.Tensor:
    with Image.open(path) as image:
        pixels = image.convert("RGB").tobytes()
    return torch.frombuffer(bytearray(pixels), dtype=torch.uint8).view(48, 64, 3)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as work:
        source, data = os.path.join(work, "source"), os.path.join(work, "data")
        os.makedirs(source)
        generator = torch.Generator().manual_seed(0)
        for i in range(COUNT):
            pixels = torch.randint(0, 256, (48, 64, 3), dtype=torch.uint8, generator=generator)
            image = Image.frombytes("RGB", (64, 48), bytes(pixels.flatten().tolist()))
            image.save(os.path.join(source, f"{i:03d}.jpg"), quality=90)
        shutil.copytree(source, data)
        for name in ("004.jpg", "009.jpg"):  # the interrupted copy: each file cut short
            path = os.path.join(data, name)
            with open(path, "r+b") as handle:
                handle.truncate(os.path.getsize(path) * 2 // 3)

        if FIXED:
# --- fix: start
            # Verify pass: decode every file fully (Image.verify() alone does not decode
            # the data), and copy the ones that fail again from the source.
            for path in JpegFolder(data).files:
                try:
                    with Image.open(path) as image:
                        image.load()
                except OSError:
                    print(f"corrupt: {os.path.basename(path)}; copying it again")
                    shutil.copyfile(os.path.join(source, os.path.basename(path)), path)
# --- fix: end

        dataset = JpegFolder(data)
        loader = DataLoader(dataset, batch_size=4, num_workers=2)
        batches = [batch for batch in loader]
        images = torch.cat(batches)
        print("decoded images:", tuple(images.shape))

        # --- check: start
        assert len(images) == COUNT  # every sample, none skipped
        for i, image in enumerate(images):
            reference = decode(os.path.join(source, f"{i:03d}.jpg"))
            assert torch.equal(image, reference), i  # the source's pixels, not a grey fill
        print(f"check: all {COUNT} images decode and equal the pixels of their source files")
        # --- check: end
