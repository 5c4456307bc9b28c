"""Reproducer for gradscaler-no-inf-checks.

`python repro.py`: transfer learning with a gradient scaler. The script builds a small
classifier, creates the optimizer over `model.parameters()`, and only then replaces the
classification head for the new task and freezes the backbone, an order that many
fine-tuning scripts have. The optimizer now holds the frozen backbone and the old head,
which is no longer part of the model; none of them gets a gradient from the loss.
`scaler.step(optimizer)` unscales nothing, records no inf/NaN check, and raises
`AssertionError: No inf checks were recorded for this optimizer.`
`python repro.py --fixed`: the optimizer is built after the model is final, over the
parameters that require a gradient (the new head). The check trains the same head with
plain float32 SGD and no scaler and asserts equal weights, and that the backbone did not
move. The model runs in float32 (no autocast) so that the scaled run can be compared
with the unscaled one; the scaler's bookkeeping is the same with autocast.

`GradScaler("cpu")` runs the same code as the CUDA scaler, so the failure is the same
without a GPU.
"""

import copy
import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
model = nn.Sequential(backbone, nn.Linear(32, 10))  # "pretrained" 10-class model
batches = [(torch.randn(8, 16), torch.randint(0, 3, (8,))) for _ in range(6)]


def adapt_to_new_task() -> None:
    model[1] = nn.Linear(32, 3)  # new head for the 3-class task
    backbone.requires_grad_(False)  # fine-tune the head only


optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # the bug: built before the change
adapt_to_new_task()
if FIXED:
    # --- fix: start
    # Build the optimizer once the model is final, over what is meant to train.
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    # --- fix: end

scaler = torch.amp.GradScaler("cpu")
initial = copy.deepcopy(model)
for step, (x, y) in enumerate(batches):
    loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # the bug: no parameter of this optimizer has a .grad
    scaler.update()
    optimizer.zero_grad()
    print(f"step {step}: loss {loss.item():.4f}, scale {scaler.get_scale():.0f}")

# --- check: start
# reference: the same head trained in plain float32 SGD, no scaler
reference = copy.deepcopy(initial)
reference_optimizer = torch.optim.SGD(reference[1].parameters(), lr=0.1)
for x, y in batches:
    nn.functional.cross_entropy(reference(x), y).backward()
    reference_optimizer.step()
    reference_optimizer.zero_grad()
for p, q in zip(model.parameters(), reference.parameters()):
    torch.testing.assert_close(p, q)
for p, q in zip(backbone.parameters(), initial[0].parameters()):
    assert torch.equal(p, q), "the frozen backbone changed"
print("check: head weights equal plain float32 training; backbone unchanged")
# --- check: end
