"""Reproducer for cuda-amp-deprecated.

`python repro.py`: a training script written the way most 2020-2023 code is: mixed
precision through `torch.cuda.amp.autocast(enabled=USE_AMP)` and
`torch.cuda.amp.GradScaler(enabled=USE_AMP)`, on only where a GPU is present, and an
inference step on CPU in bfloat16 through `torch.cpu.amp.autocast`. On torch 2.4 and later
each of those constructors warns `FutureWarning: ... is deprecated. Please use
torch.amp...(...) instead.`, whether AMP is enabled or not, so the warnings appear on a
CPU-only machine too (this one: AMP is off for training, bfloat16 autocast runs for
inference).
`python repro.py --fixed`: the same program through the device-generic API,
`torch.amp.autocast(DEVICE, ...)` and `torch.amp.GradScaler(DEVICE, ...)`. The check
compares the trained weights with plain float32 SGD written out without any AMP (what
training with AMP disabled must equal), the bfloat16 predictions with the linear layer
computed by hand in bfloat16, and confirms that no FutureWarning was shown.
"""

import sys
import warnings

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
USE_AMP = DEVICE == "cuda"  # float16 AMP with loss scaling only on a GPU

shown = []  # categories of the warnings shown, for the check; output unchanged
_show = warnings.showwarning


def showwarning(message, category, filename, lineno, file=None, line=None):
    shown.append(category)
    _show(message, category, filename, lineno, file, line)


warnings.showwarning = showwarning


def make_scaler():
    return torch.cuda.amp.GradScaler(enabled=USE_AMP)


def train_autocast():
    return torch.cuda.amp.autocast(enabled=USE_AMP)


def cpu_bf16_autocast():
    return torch.cpu.amp.autocast(dtype=torch.bfloat16)


if FIXED:
    # --- fix: start
    def make_scaler():
        return torch.amp.GradScaler(DEVICE, enabled=USE_AMP)

    def train_autocast():
        return torch.amp.autocast(DEVICE, enabled=USE_AMP)

    def cpu_bf16_autocast():
        return torch.amp.autocast("cpu", dtype=torch.bfloat16)
    # --- fix: end


X = torch.randn(64, 8)
Y = X @ torch.randn(8, 2) + 0.1 * torch.randn(64, 2)
model = torch.nn.Linear(8, 2).to(DEVICE)
initial = {k: v.detach().clone().cpu() for k, v in model.state_dict().items()}
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = make_scaler()
STEPS = 5
for step in range(STEPS):
    x, y = X.to(DEVICE), Y.to(DEVICE)
    optimizer.zero_grad()
    with train_autocast():
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(f"step {step}: loss {loss.item():.4f}")

cpu_model = model.cpu()
X_test = torch.randn(16, 8)
with torch.no_grad(), cpu_bf16_autocast():
    predictions = cpu_model(X_test)
print(f"inference on CPU: {predictions.dtype}, {tuple(predictions.shape)}")

# --- check: start
reference = torch.nn.Linear(8, 2)
reference.load_state_dict(initial)
for _step in range(STEPS):  # plain float32 SGD: what training with AMP off must equal
    reference.zero_grad()
    F.mse_loss(reference(X), Y).backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad
torch.testing.assert_close(cpu_model.state_dict(), reference.state_dict())
weight, bias = reference.weight.detach(), reference.bias.detach()
by_hand = (X_test.bfloat16() @ weight.bfloat16().T + bias.bfloat16()).float()
assert predictions.dtype == torch.bfloat16, predictions.dtype  # autocast did run
torch.testing.assert_close(predictions.float(), by_hand, rtol=1e-2, atol=1e-2)
assert FutureWarning not in shown, shown
print("check: weights equal float32 SGD, bfloat16 inference equals the layer computed by hand, no FutureWarning")
# --- check: end
