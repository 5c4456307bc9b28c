"""Reproducer for gradscaler-unscale-fp16-grads.

`python repro.py`: the model is cast to fp16 with `.half()`, so its parameters, and
therefore their `.grad`, are float16. `GradScaler.step()` unscales the gradients first and
refuses float16 ones: `ValueError: Attempting to unscale FP16 gradients.`
`python repro.py --fixed`: the parameters stay float32 (master weights) and only the
forward pass runs in float16 under `torch.autocast`; gradients come back float32 and the
scaler unscales, skips overflowing steps and updates as designed.

The check is plain Python in `GradScaler._unscale_grads_` and does not depend on the
device, so `GradScaler("cpu")` shows the same error as `GradScaler("cuda")`.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

x = torch.randn(64, 16)
y = x @ torch.randn(16, 1)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


def broken_setup() -> tuple[nn.Module, torch.autocast | None]:
    """The usual mistake: cast the whole model to fp16 and add a GradScaler on top."""
    return make_model().half(), None


# --- fix: start
def amp_setup() -> tuple[nn.Module, torch.autocast]:
    """Keep float32 parameters; run only the forward pass in float16 under autocast."""
    model = make_model()  # no .half(): the optimizer updates float32 master weights
    return model, torch.autocast(device_type="cpu", dtype=torch.float16)
# --- fix: end


model, autocast = amp_setup() if FIXED else broken_setup()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")

for step in range(6):
    optimizer.zero_grad()
    if autocast is not None:
        with autocast:
            out = model(x)
    else:
        out = model(x.half())
    loss = (out.float() - y).pow(2).mean()
    scaler.scale(loss).backward()
    grad_dtype = model[0].weight.grad.dtype
    scaler.step(optimizer)  # unscale_ runs here and checks the gradient dtype
    scaler.update()
    print(f"step {step}: loss {loss.item():.4f}, grad dtype {grad_dtype}, scale {scaler.get_scale():.0f}")
