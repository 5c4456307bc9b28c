"""Reproducer for optimizer-not-tensors.

`python repro.py`: fine-tuning only the head of a model, the script hands the optimizer
the head module itself, `torch.optim.SGD([model.head], ...)`, instead of its
parameters. The optimizer checks every entry of the list and raises `TypeError:
optimizer can only optimize Tensors, but one of the params is
torch.nn.modules.linear.Linear`.
`python repro.py --fixed`: the optimizer gets `model.head.parameters()`. The check
asserts that the head trained exactly as SGD written out by hand and that the frozen
backbone did not change.
"""

import sys
from collections import OrderedDict

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]

LR, STEPS = 0.1, 5


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    backbone = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh())
    return torch.nn.Sequential(OrderedDict(backbone=backbone, head=torch.nn.Linear(8, 2)))


model = make_model()
model.backbone.requires_grad_(False)  # only the head is fine-tuned
params = [model.head]  # meant: the head's parameters
if FIXED:
    # --- fix: start
    params = list(model.head.parameters())  # the weight and bias tensors
    # --- fix: end
optimizer = torch.optim.SGD(params, lr=LR)

g = torch.Generator().manual_seed(1)
batches = [(torch.randn(16, 6, generator=g), torch.randn(16, 2, generator=g)) for _ in range(STEPS)]
for x, y in batches:
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    optimizer.step()
print(f"trained the head for {STEPS} steps")

# --- check: start
reference = make_model()  # SGD on the head only, by hand
head = list(reference.head.parameters())
for x, y in batches:
    grads = torch.autograd.grad(F.mse_loss(reference(x), y), head)
    with torch.no_grad():
        for p, grad in zip(head, grads):
            p -= LR * grad
torch.testing.assert_close(model.state_dict(), reference.state_dict(), rtol=1e-5, atol=1e-6)
untouched = make_model().backbone.state_dict()
torch.testing.assert_close(model.backbone.state_dict(), untouched, rtol=0, atol=0)
print("check: the head equals hand-written SGD; the frozen backbone is unchanged")
# --- check: end
