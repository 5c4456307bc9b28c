"""Reproducer for optimizer-param-in-two-groups.

`python repro.py`: the usual "no weight decay for biases and norms" setup, with the
decay group built from every parameter instead of every other one. The biases and the
norm's weights are then in both groups, and the optimizer refuses the list:
`ValueError: some parameters appear in more than one parameter group`.
`python repro.py --fixed`: the decay group takes exactly the parameters the no-decay
filter leaves out, so the groups are disjoint. The check asserts that every parameter
is in exactly one group with the decay meant for it, and that training equals the same
SGD with weight decay written out by hand.
"""

import sys
from collections import OrderedDict

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]

LR, WD, STEPS = 0.1, 0.05, 5


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        OrderedDict(
            fc1=torch.nn.Linear(6, 8),
            norm=torch.nn.LayerNorm(8),
            act=torch.nn.Tanh(),
            fc2=torch.nn.Linear(8, 2),
        )
    )


def no_decay(name: str) -> bool:
    """Biases and normalisation weights are not decayed."""
    return name.endswith(".bias") or name.startswith("norm.")


model = make_model()
named = list(model.named_parameters())
decay_params = [p for n, p in named]  # meant: every parameter the filter leaves out
if FIXED:
    # --- fix: start
    decay_params = [p for n, p in named if not no_decay(n)]  # disjoint from the group below
    # --- fix: end
groups = [
    {"params": decay_params, "weight_decay": WD},
    {"params": [p for n, p in named if no_decay(n)], "weight_decay": 0.0},
]
optimizer = torch.optim.SGD(groups, lr=LR)

g = torch.Generator().manual_seed(1)
batches = [(torch.randn(16, 6, generator=g), torch.randn(16, 2, generator=g)) for _ in range(STEPS)]
for x, y in batches:
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    optimizer.step()
print(
    f"trained {STEPS} steps; groups of {[len(gr['params']) for gr in optimizer.param_groups]} parameters"
)

# --- check: start
decay_of = {}  # each parameter's weight decay, from the optimizer's own groups
for group in optimizer.param_groups:
    for p in group["params"]:
        assert id(p) not in decay_of, "a parameter is in two groups"
        decay_of[id(p)] = group["weight_decay"]
for n, p in named:  # every parameter once, with the decay it is meant to have
    assert decay_of[id(p)] == (0.0 if no_decay(n) else WD), n
reference = make_model()  # SGD with coupled weight decay, by hand
ref_params = dict(reference.named_parameters())
for x, y in batches:
    grads = torch.autograd.grad(F.mse_loss(reference(x), y), list(ref_params.values()))
    with torch.no_grad():
        for (n, p), grad in zip(ref_params.items(), grads):
            p -= LR * (grad + (0.0 if no_decay(n) else WD) * p)
torch.testing.assert_close(model.state_dict(), reference.state_dict(), rtol=1e-5, atol=1e-6)
print(
    f"check: all {len(named)} parameters in one group each; weights equal hand-written SGD with weight decay"
)
# --- check: end
