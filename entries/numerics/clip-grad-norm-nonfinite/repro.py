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


def loss_fn(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy spelled out: log(1 - p) is log(0) = -inf once sigmoid saturates."""
    p = torch.sigmoid(logits)
    return -(target * torch.log(p) + (1 - target) * torch.log(1 - p)).mean()


if FIXED:
    # --- fix: start
    def loss_fn(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The fused form works on logits (log-sum-exp), so no log(0) and no inf/NaN."""
        return F.binary_cross_entropy_with_logits(logits, target)
    # --- fix: end

max_norm, lr = 0.1, 0.1  # a small max_norm, so this step is really clipped


def train_step(net: nn.Module, error_if_nonfinite: bool) -> tuple[torch.Tensor, torch.Tensor]:
    opt = torch.optim.SGD(net.parameters(), lr=lr)
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

w0, b0 = model.weight.detach().clone(), model.bias.detach().clone()
loss, norm = train_step(model, error_if_nonfinite=True)
print(f"error_if_nonfinite=True: loss {loss.item():.4f}, total norm {norm.item():.4f}, "
      f"weights finite after step: {all(torch.isfinite(p).all().item() for p in model.parameters())}")

# --- check: start
# the same step by hand in float64, where sigmoid does not round to 1.0 and log(1 - p) is finite
x64, y64 = x.double(), y.double()
p = torch.sigmoid(x64 @ w0.double().T + b0.double())
expected_loss = -(y64 * p.log() + (1 - y64) * (1 - p).log()).mean()
dz = (p - y64) / len(y64)
grad_w, grad_b = dz.T @ x64, dz.sum(0)
expected_norm = torch.cat([grad_w.flatten(), grad_b]).norm()
clip = min(1.0, max_norm / (expected_norm.item() + 1e-6))
torch.testing.assert_close(loss.double(), expected_loss, rtol=1e-5, atol=1e-6)
torch.testing.assert_close(norm.double(), expected_norm, rtol=1e-5, atol=1e-6)
torch.testing.assert_close(model.weight.double(), w0.double() - lr * clip * grad_w, rtol=1e-5, atol=1e-6)
torch.testing.assert_close(model.bias.double(), b0.double() - lr * clip * grad_b, rtol=1e-5, atol=1e-6)
print("check: loss, gradient norm and clipped update equal the float64 computation by hand")
# --- check: end
