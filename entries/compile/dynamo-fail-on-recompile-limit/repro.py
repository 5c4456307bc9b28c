"""Reproducer for dynamo-fail-on-recompile-limit.

`python repro.py`: a per-parameter SGD update is compiled with `fullgraph=True` and called
once for every parameter of a small MLP. Dynamo treats parameters as static-shaped, so
each new weight or bias shape fails a guard and recompiles; the ninth compile of the same
function hits `recompile_limit` (8), and because of `fullgraph=True` Dynamo raises
`FailOnRecompileLimitHit` instead of running the function eagerly.
`python repro.py --fixed`: one compiled call per step updates the whole parameter list
with `torch._foreach_add_`, so the update is traced once and reused every step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
# Six layers of different widths: twelve parameters, twelve distinct shapes.
model = nn.Sequential(*[nn.Linear(8 + 4 * i, 12 + 4 * i) for i in range(6)])
lr = 0.1


@torch.compile(backend="eager", fullgraph=True)
def sgd_update(p: torch.Tensor, lr: float) -> None:
    p.add_(p.grad, alpha=-lr)


# --- fix: start
@torch.compile(backend="eager", fullgraph=True)
def sgd_update_all(params: list[torch.Tensor], lr: float) -> None:
    """Update every parameter in one traced call: one graph for the whole list."""
    torch._foreach_add_(params, [p.grad for p in params], alpha=-lr)
# --- fix: end


for step in range(3):
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        if FIXED:
            sgd_update_all(list(model.parameters()), lr)
        else:
            for p in model.parameters():
                sgd_update(p, lr)
    for old, p in zip(before, model.parameters()):
        assert torch.allclose(p, old - lr * p.grad)
    print(f"step {step}: all parameters updated")

print("compiled graphs:", torch._dynamo.utils.counters["stats"]["unique_graphs"])
