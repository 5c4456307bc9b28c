"""Reproducer for torch-load-weights-only-unpickling.

`python repro.py`: a training script saves a checkpoint holding the model and optimizer
state dicts plus its `argparse.Namespace` of hyperparameters (a common pattern). Loading
it back with a plain `torch.load(path)` uses the default `weights_only=True` (torch >= 2.6),
whose restricted unpickler meets `GLOBAL argparse.Namespace`, a class that is not on its
allowlist, and raises `_pickle.UnpicklingError: Weights only load failed. ...`.
`python repro.py --fixed`: the loader first lists the checkpoint's non-tensor globals with
`torch.serialization.get_unsafe_globals_in_checkpoint`, then loads with `weights_only=True`
inside `torch.serialization.safe_globals([argparse.Namespace])`, allowing exactly that
one class. The check compares everything loaded with what was saved.
"""

import argparse
import os
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]


def load_checkpoint(path: str) -> dict:
    return torch.load(path)  # weights_only defaults to True since torch 2.6


if FIXED:
    # --- fix: start
    def load_checkpoint(path: str) -> dict:
        """Allowlist exactly the non-tensor classes this checkpoint holds; keep weights_only=True."""
        print("globals outside the default allowlist:", torch.serialization.get_unsafe_globals_in_checkpoint(path))
        with torch.serialization.safe_globals([argparse.Namespace]):
            return torch.load(path, map_location="cpu", weights_only=True)
    # --- fix: end


torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model(torch.randn(3, 4)).sum().backward()
optimizer.step()
args = argparse.Namespace(lr=0.1, epochs=3, run_name="baseline")

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "args": args, "epoch": 3}, path)
    checkpoint = load_checkpoint(path)

restored = torch.nn.Linear(4, 2)
restored.load_state_dict(checkpoint["model"])
print("restored epoch", checkpoint["epoch"], "with", checkpoint["args"])

# --- check: start
torch.testing.assert_close(restored.state_dict(), model.state_dict())
torch.testing.assert_close(checkpoint["optimizer"], optimizer.state_dict())
assert checkpoint["args"] == args and checkpoint["epoch"] == 3
print("check: model, optimizer state, hyperparameters and epoch equal what was saved")
# --- check: end
