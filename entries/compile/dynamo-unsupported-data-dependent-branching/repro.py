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


# --- fix: start
class CondRouter(Router):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Both branches are traced into the graph; the predicate picks one at run time.
        return torch.cond(x.mean() > 0, self.expand, self.shrink, (x,))
# --- fix: end


torch.manual_seed(0)
model = CondRouter() if FIXED else Router()
compiled = torch.compile(model, backend="eager", fullgraph=True)

with torch.no_grad():
    for sign in (1.0, -1.0):
        x = sign * torch.rand(4, 16)
        expected = model.expand(x) if sign > 0 else model.shrink(x)
        assert torch.allclose(compiled(x), expected)
        print(f"input sign {sign:+.0f}: output matches eager")

print("compiled graphs:", torch._dynamo.utils.counters["stats"]["unique_graphs"])
