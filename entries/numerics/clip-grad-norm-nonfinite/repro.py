"""Reproducer for clip-grad-norm-nonfinite.

`python repro.py`: a hand-written binary cross-entropy takes `log(sigmoid(z))` and
`log(1 - sigmoid(z))`. One sample has an unscaled feature, its logit saturates,
`sigmoid` rounds to exactly 1.0 in float32, and `log(1 - 1.0) = -inf` makes the loss
and every gradient NaN. First, on a copy of the model, the default
`clip_grad_norm_(..., error_if_nonfinite=False)` "clips" and the optimizer steps: every
weight becomes NaN without any error. Then the real step clips with
`error_if_nonfinite=True`, which raises instead.
`python repro.py --fixed`: the loss uses `binary_cross_entropy_with_logits`, which never
evaluates `log(0)`; the norm is finite, clipping works and the weights stay finite.
"""

import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

x = torch.randn(8, 4)
x[3, 0] = 60.0  # one raw, unnormalised feature value
y = torch.tensor([[1.0], [0.0], [1.0], [1.0], [0.0], [1.0], [0.0], [1.0]])

model = nn.Linear(4, 1)
with torch.no_grad():
    model.weight.fill_(0.5)
    model.bias.zero_()


def naive_bce(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy spelled out: log(1 - p) is log(0) = -inf once sigmoid saturates."""
    p = torch.sigmoid(logits)
    return -(target * torch.log(p) + (1 - target) * torch.log(1 - p)).mean()


# --- fix: start
def stable_bce(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The fused form works on logits (log-sum-exp), so no log(0) and no inf/NaN."""
    return F.binary_cross_entropy_with_logits(logits, target)
# --- fix: end

loss_fn = stable_bce if FIXED else naive_bce
max_norm = 1.0


def train_step(net: nn.Module, error_if_nonfinite: bool) -> torch.Tensor:
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    opt.zero_grad()
    loss = loss_fn(net(x), y)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(
        net.parameters(), max_norm, error_if_nonfinite=error_if_nonfinite
    )
    opt.step()
    return loss, norm


probe = copy.deepcopy(model)
loss, norm = train_step(probe, error_if_nonfinite=False)
print(f"default error_if_nonfinite=False: loss {loss.item():.4f}, total norm {norm.item():.4f}, "
      f"weights finite after step: {all(torch.isfinite(p).all().item() for p in probe.parameters())}")

loss, norm = train_step(model, error_if_nonfinite=True)
print(f"error_if_nonfinite=True: loss {loss.item():.4f}, total norm {norm.item():.4f}, "
      f"weights finite after step: {all(torch.isfinite(p).all().item() for p in model.parameters())}")
