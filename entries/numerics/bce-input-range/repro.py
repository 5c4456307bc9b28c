"""Reproducer for bce-input-range.

`python repro.py`: a binary classifier ends in a plain `nn.Linear`, so it outputs logits
(any real number), and the training loop scores them with `nn.BCELoss`, which expects
probabilities in [0, 1]. The CPU kernel checks every element and raises on the first
negative logit. On CUDA the same mistake trips a device-side assert in the kernel
(input_val >= zero && input_val <= one) instead.
`python repro.py --fixed`: the loss is `nn.BCEWithLogitsLoss`, which applies the sigmoid
inside the loss in a numerically stable form; the model keeps returning logits and
`torch.sigmoid` is applied only where probabilities are needed (the accuracy).
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

x = torch.randn(256, 10)
y = (x[:, 0] + 0.5 * x[:, 1] > 0).float().unsqueeze(1)  # labels in {0, 1}
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))  # returns logits
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

criterion = nn.BCELoss()
if FIXED:
    # --- fix: start
    criterion = nn.BCEWithLogitsLoss()  # takes logits: applies the sigmoid inside, stably
    # --- fix: end

with torch.no_grad():
    first = model(x)
print(f"model output range: [{first.min():.3f}, {first.max():.3f}] (logits, not probabilities)")

seen = []
for epoch in range(5):
    logits = model(x)
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    accuracy = ((torch.sigmoid(logits) > 0.5).float() == y).float().mean()
    seen.append((logits.detach(), loss.detach()))
    print(f"epoch {epoch}: loss {loss.item():.4f}, accuracy {accuracy:.3f}")

# --- check: start
for logits, loss in seen:
    p = torch.sigmoid(logits.double())  # binary cross-entropy written out, in float64
    expected = -(y * p.log() + (1 - y) * (1 - p).log()).mean()
    torch.testing.assert_close(loss.double(), expected, rtol=1e-5, atol=1e-6)
assert seen[-1][1] < seen[0][1]  # and training lowered it
print("check: each epoch's loss equals binary cross-entropy of sigmoid(logits); it decreased")
# --- check: end
