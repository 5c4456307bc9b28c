"""Reproducer for gradscaler-without-cuda.

`python repro.py`: a mixed-precision training loop written for a GPU, float16 autocast
with a `GradScaler`, both built for `"cuda"`, run where torch sees no CUDA device (this
machine: a CPU-only torch; the same happens with a CUDA torch and no visible GPU). Both
disable themselves with a warning (`torch.cuda.amp.GradScaler is enabled, but CUDA is not
available.  Disabling.` and the autocast notice), and the loop goes on in plain float32:
no mixed precision, no loss scaling, no error.
`python repro.py --fixed`: the loop asks for the device it really runs on: float16 with a
`GradScaler` on a GPU, bfloat16 autocast (no scaler needed) on a CPU. The check confirms
that autocast really ran (the forward pass returned the low-precision dtype) and that the
trained weights match float32 training written out by hand within bfloat16 rounding.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # where the tensors really live
AMP_DEVICE, AMP_DTYPE, USE_SCALER = "cuda", torch.float16, True  # written for a GPU
if FIXED:
    # --- fix: start
    AMP_DEVICE = DEVICE  # autocast and the scaler for the device the run really uses
    AMP_DTYPE = torch.float16 if DEVICE == "cuda" else torch.bfloat16
    USE_SCALER = DEVICE == "cuda"  # float16 needs loss scaling; bfloat16 has float32's range
    # --- fix: end

X = torch.randn(128, 16)
Y = X @ torch.randn(16, 4) + 0.05 * torch.randn(128, 4)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
initial = {k: v.clone() for k, v in model.state_dict().items()}
model.to(DEVICE)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler(AMP_DEVICE, enabled=USE_SCALER)
STEPS = 20
forward_dtypes = set()
for step in range(STEPS):
    x, y = X.to(DEVICE), Y.to(DEVICE)
    optimizer.zero_grad()
    with torch.autocast(AMP_DEVICE, dtype=AMP_DTYPE):
        out = model(x)
        forward_dtypes.add(out.dtype)
        loss = F.mse_loss(out.float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.4f}, forward in {out.dtype}")
print(f"forward pass ran in {sorted(str(d) for d in forward_dtypes)}, loss scaling {'on' if scaler.is_enabled() else 'off'}")

# --- check: start
assert forward_dtypes in ({torch.float16}, {torch.bfloat16}), forward_dtypes  # autocast ran
reference = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
reference.load_state_dict(initial)
for _step in range(STEPS):  # the same training in float32, SGD written out
    reference.zero_grad()
    F.mse_loss(reference(X), Y).backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.05 * p.grad
trained = {k: v.cpu() for k, v in model.state_dict().items()}
torch.testing.assert_close(trained, reference.state_dict(), rtol=0.02, atol=0.02)
with torch.no_grad():
    final = F.mse_loss(reference(X), Y).item()
print(f"check: mixed precision ran ({sorted(str(d) for d in forward_dtypes)}); weights match float32 training within low-precision rounding (float32 final loss {final:.4f})")
# --- check: end
