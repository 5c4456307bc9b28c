"""Reproducer for torch-save-disk-full.

`python repro.py`: a training step's model and optimizer state (about 3 MB) is saved with
`torch.save` to a checkpoint path on a volume with no space left. `/dev/full` stands in for
that path: the kernel fails every write to it with `ENOSPC` ("No space left on device"),
as it does on a full disk. torch 2.13's `PyTorchStreamWriter` raises the failed write
(`basic_ios::clear: iostream error`), and closing the archive then fails with
`[enforce fail at inline_container.cc:...] . unexpected pos N vs M`. Older releases
reported the failed write itself as `PytorchStreamWriter failed writing file data/N: file
write failed`.
`python repro.py --fixed`: the checkpoint goes to a folder on a volume with room for it.
The check loads it back and compares every tensor of the model and optimizer state with
the state computed again from the same seed.
"""

import os
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]
FULL_VOLUME = "/dev/full"  # every write fails with ENOSPC, as on a full disk


def training_state(seed: int) -> dict:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.randn(8, 512)).sum().backward()
    optimizer.step()
    return {"step": 1, "model": model.state_dict(), "optimizer": optimizer.state_dict()}


state = training_state(seed=0)
tensor_bytes = sum(t.nbytes for t in state["model"].values())
print(f"saving a checkpoint with {tensor_bytes * 3 / 1e6:.1f} MB of model and optimizer tensors")

with tempfile.TemporaryDirectory(prefix="repro-disk-full-") as workdir:
    checkpoint = FULL_VOLUME
    if FIXED:
        # --- fix: start
        checkpoint = os.path.join(workdir, "last.pt")  # a folder on a volume with room for the whole checkpoint
        # --- fix: end
    torch.save(state, checkpoint)
    print(f"saved {os.path.getsize(checkpoint)} bytes to {os.path.basename(checkpoint)}")

    # --- check: start
    restored = torch.load(checkpoint)
    expected = training_state(seed=0)  # the same state, computed again
    assert restored["step"] == expected["step"]
    torch.testing.assert_close(restored["model"], expected["model"])
    torch.testing.assert_close(restored["optimizer"], expected["optimizer"])
    print("check: the saved checkpoint loads back with every model and optimizer tensor intact")
    # --- check: end
