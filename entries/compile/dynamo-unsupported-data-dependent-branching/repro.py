"""Reproducer for dynamo-unsupported-data-dependent-branching.

`python repro.py`: a module compiled with `fullgraph=True` picks one of two layers with a
Python `if` on a tensor value (`x.mean() > 0`). Dynamo traces with fake tensors that have
no values, cannot decide the branch, and under `fullgraph=True` raises
`Unsupported: Data-dependent branching` instead of splitting the graph.
`python repro.py --fixed`: the branch is written with `torch.cond`, which puts both
branches into the graph and picks one at run time; one graph serves both signs of input.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Router(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.expand = nn.Linear(16, 16)
        self.shrink = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # A Python `if` on a tensor's value: Dynamo cannot trace it into one graph.
        if x.mean() > 0:
            return self.expand(x)
        return self.shrink(x)


Model = Router
if FIXED:
    # --- fix: start
    class CondRouter(Router):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            # Both branches are traced into the graph; the predicate picks one at run time.
            return torch.cond(x.mean() > 0, self.expand, self.shrink, (x,))

    Model = CondRouter
    # --- fix: end


torch.manual_seed(0)
model = Model()
compiled = torch.compile(model, backend="eager", fullgraph=True)
inputs = [torch.rand(4, 16), -torch.rand(4, 16)]  # positive mean, negative mean
with torch.no_grad():
    outputs = [compiled(x) for x in inputs]
print("compiled graphs:", torch._dynamo.utils.counters["stats"]["unique_graphs"])

# --- check: start
reference = Router()  # the original module with the Python `if`, run eagerly
reference.load_state_dict(model.state_dict())
with torch.no_grad():
    for x, out in zip(inputs, outputs):
        torch.testing.assert_close(out, reference(x))
print("check: compiled output equals the eager module for inputs of both signs")
# --- check: end
