"""Reproducer for dataparallel-attribute-error.

`python repro.py`: a classifier with its own attribute (`classes`) and method
(`predict`) is wrapped for training, first in `nn.DataParallel` (which runs on CPU too,
calling the module directly when no GPU is visible), then in
`DistributedDataParallel` (one process, gloo backend). The evaluation code then reads
`model.classes` and calls `model.predict(x)` on the wrapper, which only forwards
`forward`: `AttributeError: 'DataParallel' object has no attribute 'classes'`, and for
DDP `AttributeError: 'DistributedDataParallel' object has no attribute 'classes'`.
`python repro.py --fixed`: the evaluation reads them from the wrapped model,
`model.module`. The check compares the predicted labels with the labels computed from
the classifier's weights directly.
"""

import os
import socket
import sys
import traceback

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.classes = ["cat", "dog", "bird"]
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)

    def predict(self, x: torch.Tensor) -> list:
        with torch.no_grad():
            return [self.classes[i] for i in self(x).argmax(1).tolist()]


def inner(model: nn.Module) -> nn.Module:
    return model  # assumes the object is the Classifier itself


if FIXED:
# --- fix: start
    def inner(model: nn.Module) -> nn.Module:
        """The user's own model inside a DataParallel/DDP wrapper (or the model itself)."""
        return model.module if isinstance(model, (nn.DataParallel, DistributedDataParallel)) else model
# --- fix: end


def evaluate(model: nn.Module, x: torch.Tensor) -> list:
    net = inner(model)
    print(f"{type(model).__name__}: {len(net.classes)} classes")
    return net.predict(x)


x = torch.randn(8, 4)
net = Classifier()
results = {}

dp_model = nn.DataParallel(net)
dp_model(x).sum().backward()  # a training step through the wrapper
try:
    results["DataParallel"] = evaluate(dp_model, x)
except AttributeError:
    traceback.print_exc()  # keep going: show the DDP wording too

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
dist.init_process_group("gloo", rank=0, world_size=1)
try:
    ddp_model = DistributedDataParallel(net)
    ddp_model(x).sum().backward()
    results["DistributedDataParallel"] = evaluate(ddp_model, x)
finally:
    dist.destroy_process_group()
print(results)

# --- check: start
# Reference: the labels computed from the classifier's weights, with no module call.
with torch.no_grad():
    logits = x @ net.fc.weight.T + net.fc.bias
expected = [["cat", "dog", "bird"][i] for i in logits.argmax(1).tolist()]
assert results == {"DataParallel": expected, "DistributedDataParallel": expected}, (results, expected)
print("check: through both wrappers, the 8 predicted labels equal those computed from the weights")
# --- check: end
