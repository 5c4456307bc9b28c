"""Reproducer for dynamo-fail-on-recompile-limit.

`python repro.py`: a per-parameter SGD update is compiled with `fullgraph=True` and called
once for every parameter of a small MLP. Dynamo treats parameters as static-shaped, so
each new weight or bias shape fails a guard and recompiles; the ninth compile of the same
function hits `recompile_limit` (8), and because of `fullgraph=True` Dynamo raises
`FailOnRecompileLimitHit` instead of running the function eagerly.
`python repro.py --fixed`: one compiled call per step updates the whole parameter list
with `torch._foreach_add_`, so the update is traced once and reused every step.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
# Six layers of different widths: twelve parameters, twelve distinct shapes.
model = nn.Sequential(*[nn.Linear(8 + 4 * i, 12 + 4 * i) for i in range(6)])
reference = copy.deepcopy(model)  # updated in eager mode by the check
lr = 0.1


@torch.compile(backend="eager", fullgraph=True)
def sgd_update(p: torch.Tensor, lr: float) -> None:
    p.add_(p.grad, alpha=-lr)


def sgd_step(params: list[torch.Tensor], lr: float) -> None:
    for p in params:
        sgd_update(p, lr)


if FIXED:
    # --- fix: start
    @torch.compile(backend="eager", fullgraph=True)
    def sgd_step(params: list[torch.Tensor], lr: float) -> None:
        """Update every parameter in one traced call: one graph for the whole list."""
        torch._foreach_add_(params, [p.grad for p in params], alpha=-lr)
    # --- fix: end


grads_per_step = [[torch.randn_like(p) for p in model.parameters()] for _ in range(3)]
for step, grads in enumerate(grads_per_step):
    for p, grad in zip(model.parameters(), grads):
        p.grad = grad
    with torch.no_grad():
        sgd_step(list(model.parameters()), lr)
    print(f"step {step}: update applied")

print("compiled graphs:", torch._dynamo.utils.counters["stats"]["unique_graphs"])

# --- check: start
with torch.no_grad():
    for grads in grads_per_step:  # the same three SGD steps, in eager mode
        for p, grad in zip(reference.parameters(), grads):
            p -= lr * grad
for p, expected in zip(model.parameters(), reference.parameters()):
    torch.testing.assert_close(p, expected)
print("check: all 12 parameters equal three eager SGD steps")
# --- check: end
