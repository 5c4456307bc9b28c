"""Reproducer for autograd-grad-tensors-shape-mismatch.

`python repro.py`: a WGAN critic step written for PyTorch 0.3, when a mean was a
1-element tensor: the critic's scores are reduced with `.mean()` and backpropagated
with `backward(one)` / `backward(mone)`, where `one = torch.FloatTensor([1])`. Since
PyTorch 0.4 `.mean()` returns a 0-dim tensor (shape `[]`), and a `gradient` of shape
`[1]` no longer matches it, so `backward` refuses.
`python repro.py --fixed`: `one` and `mone` are 0-dim, like the losses; the check
compares the critic's gradients with the hand-derived ones.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
print("torch", torch.__version__)

critic = nn.Linear(6, 1)  # a linear critic, so its gradients can be derived by hand
real = torch.randn(32, 6) + 1.0
fake = torch.randn(32, 6)

one = torch.FloatTensor([1])  # PyTorch 0.3 code: losses were 1-element tensors then
mone = one * -1
if FIXED:
    # --- fix: start
    one = torch.tensor(1.0)  # 0-dim, the shape of a loss reduced with .mean()
    mone = one * -1
    # --- fix: end

critic.zero_grad()
err_real = critic(real).mean()
print("loss shape", tuple(err_real.shape), "gradient shape", tuple(mone.shape))
err_real.backward(mone)  # maximise the critic's score on real samples
err_fake = critic(fake).mean()
err_fake.backward(one)  # minimise it on generated samples
print("Wasserstein estimate", (err_real - err_fake).item())

# --- check: start
# The critic step minimises mean(D(fake)) - mean(D(real)) with D(x) = w.x + b, so
# dw = mean(fake) - mean(real) and db = 1 - 1 = 0.
torch.testing.assert_close(critic.weight.grad, (fake.mean(0) - real.mean(0)).unsqueeze(0))
torch.testing.assert_close(critic.bias.grad, torch.zeros(1))
print("check: the critic's gradients equal the hand-derived ones")
# --- check: end
