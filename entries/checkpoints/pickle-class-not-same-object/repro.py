"""Reproducer for pickle-class-not-same-object.

`python repro.py`: the model's class lives in a module `netdef`; a model is built and
trained, then the module is reloaded (what `importlib.reload`, IPython's `%autoreload`
or re-running a notebook cell does), which binds `netdef.Net` to a new class object.
`torch.save(model, path)` pickles the model's class by reference, finds that
`netdef.Net` is no longer the model's class, and raises "Can't pickle <class
'netdef.Net'>: it's not the same object as netdef.Net".
`python repro.py --fixed`: the checkpoint holds the state_dict (tensors only, no class
reference); loading builds a model from the current class and fills it in.
"""

import importlib
import os
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]

SOURCE = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)
'''

with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, "netdef.py"), "w") as handle:
        handle.write(SOURCE)
    sys.path.insert(0, folder)
    netdef = importlib.import_module("netdef")  # the module written above

    torch.manual_seed(0)
    model = netdef.Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = model(torch.randn(8, 6)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    importlib.reload(netdef)  # the definition is run again: netdef.Net is a new class
    print("model's class is netdef.Net:", type(model) is netdef.Net)

    path = os.path.join(folder, "model.pt")

    def save(model: torch.nn.Module, path: str) -> None:
        torch.save(model, path)  # pickles type(model) by its name, netdef.Net

    def load(path: str) -> torch.nn.Module:
        return torch.load(path, weights_only=False)

    if FIXED:
# --- fix: start
        def save(model: torch.nn.Module, path: str) -> None:
            torch.save(model.state_dict(), path)  # tensors only, no class reference

        def load(path: str) -> torch.nn.Module:
            restored = netdef.Net()  # the class as it is defined now
            restored.load_state_dict(torch.load(path))
            return restored
# --- fix: end

    save(model, path)
    restored = load(path)
    print("saved and loaded:", type(restored).__name__)

    # --- check: start
    saved = model.state_dict()
    loaded = restored.state_dict()
    assert saved.keys() == loaded.keys()
    for name in saved:
        torch.testing.assert_close(loaded[name], saved[name], rtol=0, atol=0)
    probe = torch.randn(4, 6)
    with torch.no_grad():
        torch.testing.assert_close(restored(probe), model(probe), rtol=0, atol=0)
    print("check: the reloaded model equals the saved one, tensor for tensor and in its outputs")
    # --- check: end
