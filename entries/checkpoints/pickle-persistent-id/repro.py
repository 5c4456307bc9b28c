"""Reproducer for pickle-persistent-id.

A `torch.save` checkpoint is a zip archive: `data.pkl` holds the pickled structure, and
every tensor in it is only a persistent id that points at a storage file under `data/`.
Archive tools and some downloads unpack such a file into a folder
(`checkpoint/data.pkl`, `checkpoint/data/0`, ...), and the loading script then opens
`data.pkl` with `pickle.load`, as if it were a plain pickle.

`python repro.py`: `pickle.load` meets the first persistent id and raises
`_pickle.UnpicklingError: A load persistent id instruction was encountered,` (Python
3.11; 3.12 and later print it on one line).
`python repro.py --fixed`: the unpacked folder is packed back into one zip file, as
`torch.save` wrote it, and read with `torch.load`, which resolves the persistent ids.
The check: every tensor loaded equals the one saved (values, dtype, shape), and no key
is missing or added.
"""

import atexit
import os
import pickle
import shutil
import sys
import tempfile
import zipfile

import torch

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-persid-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.chdir(work)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
saved = {"model": model.state_dict(), "step": torch.tensor(1200)}
torch.save(saved, "checkpoint.pth")
with zipfile.ZipFile("checkpoint.pth") as archive:  # what an archive tool does to it
    archive.extractall("unpacked")
os.remove("checkpoint.pth")
print("unpacked:", sorted(os.listdir("unpacked/checkpoint")))


def load(folder: str) -> dict:
    """How the loading script reads the checkpoint: the pickle, with pickle."""
    with open(os.path.join(folder, "checkpoint", "data.pkl"), "rb") as handle:
        return pickle.load(handle)


if FIXED:
    # --- fix: start
    # Pack the folder back into the zip archive torch.save writes, and use torch.load,
    # which resolves each tensor's persistent id to its storage file.
    def load(folder: str) -> dict:
        with zipfile.ZipFile("checkpoint.pth", "w", zipfile.ZIP_STORED) as archive:
            for root, _, files in os.walk(folder):
                for name in files:
                    path = os.path.join(root, name)
                    archive.write(path, os.path.relpath(path, folder))
        return torch.load("checkpoint.pth", weights_only=True)

    # --- fix: end

loaded = load("unpacked")
print("loaded keys:", sorted(loaded))

# --- check: start
assert sorted(loaded) == sorted(saved)
assert sorted(loaded["model"]) == sorted(saved["model"])
for name, tensor in saved["model"].items():
    got = loaded["model"][name]
    assert got.dtype == tensor.dtype and got.shape == tensor.shape, name
    assert torch.equal(got, tensor), name
assert torch.equal(loaded["step"], saved["step"])
print(f"check: {len(saved['model'])} tensors and the step equal the saved ones")
# --- check: end
