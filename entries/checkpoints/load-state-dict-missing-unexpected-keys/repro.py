"""Reproducer for load-state-dict-missing-unexpected-keys.

`python repro.py`: two checkpoints are saved from wrapped models and loaded into a plain
`Net` with the default `strict=True`:
- one from `nn.DataParallel(Net())`, whose keys start with `module.` (DDP adds the same
  prefix); `load_state_dict` raises `Error(s) in loading state_dict for Net: Missing
  key(s) ... Unexpected key(s) in state_dict: "module.encoder.weight", ...` (printed,
  then the script goes on);
- one from `torch.compile(Net())`, whose keys start with `_orig_mod.`; same error.
`python repro.py --fixed`: both prefixes are stripped with
`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present` before a strict load,
and every key matches. The check compares each loaded model's tensors with the weights
of the network that was saved.
"""

import os
import sys
import tempfile
import traceback

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.fc = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.encoder(x)))


def load_into(model: nn.Module, state_dict: dict):
    return model.load_state_dict(state_dict)  # strict: every key must match


if FIXED:
    # --- fix: start
    def load_into(model: nn.Module, state_dict: dict):
        """Strip the prefixes DataParallel/DDP (`module.`) and torch.compile (`_orig_mod.`) add."""
        for prefix in ("module.", "_orig_mod."):
            torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state_dict, prefix)
        return model.load_state_dict(state_dict)  # still strict: every key must match
    # --- fix: end


def save_and_reload(wrapped: nn.Module, folder: str, name: str) -> dict:
    path = os.path.join(folder, name)
    torch.save(wrapped.state_dict(), path)  # keys carry the wrapper's prefix
    return torch.load(path, map_location="cpu")


torch.manual_seed(0)
trained = {"DataParallel": Net(), "torch.compile": Net()}
with tempfile.TemporaryDirectory() as tmp:
    checkpoints = {
        "DataParallel": save_and_reload(nn.DataParallel(trained["DataParallel"]), tmp, "dp.pt"),
        "torch.compile": save_and_reload(torch.compile(trained["torch.compile"]), tmp, "compiled.pt"),
    }
restored = {}
for source, state_dict in checkpoints.items():
    print(f"checkpoint from {source}: first key {next(iter(state_dict))!r}")
    model = Net()
    try:
        print("  ", load_into(model, state_dict))
        restored[source] = model
    except RuntimeError:
        traceback.print_exc()  # keep going: show the torch.compile prefix too

# --- check: start
for source, original in trained.items():
    torch.testing.assert_close(restored[source].state_dict(), original.state_dict())
print("check: both loaded models hold exactly the weights of the networks that were saved")
# --- check: end
