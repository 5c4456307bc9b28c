"""Reproducer for loss-target-size-mismatch.

`python repro.py`: a binary classifier ends in `nn.Linear(8, 1)`, so its logits have shape
`(N, 1)`, while the labels are a plain vector of shape `(N,)`. `nn.BCEWithLogitsLoss`
refuses the pair: `ValueError: Target size (torch.Size([8])) must be the same as input
size (torch.Size([8, 1]))`.
`python repro.py --fixed`: the model's output is squeezed along its last dimension
(`squeeze(1)`, not a bare `squeeze()`), so each sample's logit meets its own label and
every batch trains, including a last batch of one sample.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

features = torch.randn(33, 8)  # 33 samples: four batches of 8 and a last batch of 1
labels = (features[:, 0] > 0).float()  # binary labels, shape (33,)

model = nn.Linear(8, 1)  # one output unit: logits of shape (N, 1)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)


def predict_logits(batch: torch.Tensor) -> torch.Tensor:
    return model(batch)  # (N, 1)


if FIXED:
# --- fix: start
    def predict_logits(batch: torch.Tensor) -> torch.Tensor:
        """One logit per sample, shaped like the (N,) labels."""
        return model(batch).squeeze(1)  # (N, 1) -> (N,); a bare .squeeze() would turn a batch of 1 into a scalar
# --- fix: end

trained_on = 0
for start in range(0, len(labels), 8):
    x, y = features[start:start + 8], labels[start:start + 8]
    loss = criterion(predict_logits(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    trained_on += len(y)
    print(f"batch at {start}: {len(y)} samples, loss {loss.item():.4f}")

# --- check: start
# Reference: binary cross-entropy written out for each sample alone, its one logit against its own label.
with torch.no_grad():
    loss_all = criterion(predict_logits(features), labels).item()
    per_sample = []
    for x, y in zip(features, labels.tolist()):
        p = torch.sigmoid(model(x[None])[0, 0]).item()
        per_sample.append(-(y * math.log(p) + (1 - y) * math.log(1 - p)))
assert trained_on == len(labels), trained_on
assert math.isclose(loss_all, sum(per_sample) / len(per_sample), rel_tol=1e-5), (loss_all, per_sample)
print(f"check: all {trained_on} samples trained; the loss equals the per-sample BCE of each logit with its own label")
# --- check: end
