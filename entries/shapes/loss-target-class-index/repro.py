"""Reproducer for loss-target-class-index.

`python repro.py`: a 3-class classifier is trained on rows of a CSV file whose last column
is the class code. The rows are parsed into one float tensor and the label column is sliced
as `table[:, -1:]`, shape `(N, 1)`, dtype float32, the way regression targets are kept.
`nn.CrossEntropyLoss` takes a target of another shape than the logits to be class
indices, which must be 1-D: `RuntimeError: 0D or 1D target tensor expected, multi-target
not supported`. (A float `(N,)` vector would fail on its dtype instead, and one-hot rows of
integers on `Expected floating point type for target with class probabilities`.)
`python repro.py --fixed`: the label column becomes what the loss takes, class indices of
shape `(N,)` and dtype int64, after checking the codes are whole numbers in range; one-hot
rows from a second source go through the same conversion.
"""

import io
import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

num_classes = 3
rows = [[round(v, 3) for v in torch.randn(4).tolist()] + [i % num_classes] for i in range(24)]
csv_text = "\n".join(",".join(str(v) for v in row) for row in rows)
table = torch.tensor([[float(v) for v in line.split(",")] for line in io.StringIO(csv_text)])
features, raw_labels = table[:, :-1], table[:, -1:]  # label column: (24, 1) float32
one_hot_labels = nn.functional.one_hot(torch.arange(8) % num_classes, num_classes)  # another source: (8, 3) int64
extra_features = torch.randn(8, 4)


def to_class_index(labels: torch.Tensor) -> torch.Tensor:
    return labels  # used as they come


if FIXED:
# --- fix: start
    def to_class_index(labels: torch.Tensor) -> torch.Tensor:
        """(N,) int64 class indices from a (N, 1) column of codes or (N, C) one-hot rows."""
        if labels.dim() == 2 and labels.size(1) > 1:  # one-hot rows: the index of the 1
            labels = labels.argmax(dim=1)
        labels = labels.reshape(-1)
        assert torch.equal(labels, labels.round()), "class codes must be whole numbers"
        labels = labels.long()
        assert labels.min() >= 0 and labels.max() < num_classes, (labels.min(), labels.max())
        return labels
# --- fix: end

model = nn.Linear(4, num_classes)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

trained_on = 0
for x, labels in [(features, raw_labels), (extra_features, one_hot_labels)]:
    for start in range(0, len(x), 8):
        targets = to_class_index(labels[start:start + 8])
        loss = criterion(model(x[start:start + 8]), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        trained_on += len(targets)
        print(f"batch of {len(targets)}: target {tuple(targets.shape)} {targets.dtype}, loss {loss.item():.4f}")

# --- check: start
# Reference: each CSV row's class code read as an int from the text, scored on its own.
codes = [int(line.rsplit(",", 1)[1]) for line in io.StringIO(csv_text)]
with torch.no_grad():
    loss_csv = criterion(model(features), to_class_index(raw_labels)).item()
    per_row = [-torch.log_softmax(model(x[None])[0], dim=0)[c].item() for x, c in zip(features, codes)]
    same_one_hot = torch.equal(to_class_index(one_hot_labels), torch.arange(8) % num_classes)
assert trained_on == len(rows) + len(one_hot_labels), trained_on
assert math.isclose(loss_csv, sum(per_row) / len(per_row), rel_tol=1e-5), loss_csv
assert same_one_hot
print(f"check: all {trained_on} samples trained; each row's loss uses the class code written in the file")
# --- check: end
