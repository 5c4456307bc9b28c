"""Reproducer for cross-entropy-target-out-of-bounds.

`python repro.py`: a 5-class classifier is trained on labels read from a CSV-style
annotation file that numbers the classes 1 to 5. The model's head has 5 outputs, so the
valid class indices are 0 to 4; the first batch that holds a sample of class "5" makes
`nn.CrossEntropyLoss` raise `IndexError: Target 5 is out of bounds.` on the CPU.
`python repro.py --fixed`: the labels are mapped to contiguous indices 0..C-1 with an
explicit class-to-index table (as `torchvision.datasets.ImageFolder` does with
`class_to_idx`), the head is sized from that table, and the targets are checked against
it before training.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

# Annotation file rows: (sample id, class label). The labelling tool numbered classes from 1.
annotations = [(f"img_{i:03d}.png", 1 + i % 5) for i in range(40)]
raw_labels = [label for _, label in annotations]
features = torch.randn(len(annotations), 8)

targets = torch.tensor(raw_labels)  # 1..5 used directly as class indices
num_classes = len(set(raw_labels))  # 5 classes -> valid indices are 0..4
if FIXED:
# --- fix: start
    # Map whatever the file uses (1-based ids, strings, sparse codes) to 0..C-1 once.
    class_to_idx = {label: idx for idx, label in enumerate(sorted(set(raw_labels)))}
    targets = torch.tensor([class_to_idx[label] for label in raw_labels])
    num_classes = len(class_to_idx)
    assert targets.min() >= 0 and targets.max() < num_classes, (targets.min(), targets.max(), num_classes)
    print("class_to_idx:", class_to_idx)
# --- fix: end

model = nn.Linear(8, num_classes)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
print(f"head outputs {num_classes} classes; targets range {targets.min().item()}..{targets.max().item()}")

trained_on = 0
for start in range(0, len(targets), 8):
    x, y = features[start:start + 8], targets[start:start + 8]
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    trained_on += len(y)
    print(f"batch at {start}: loss {loss.item():.4f}")

# --- check: start
# Every annotated sample was trained on, and each target names its own annotated class:
# the same label always gives the same target, different labels different targets.
assert trained_on == len(annotations), trained_on
label_target_pairs = set(zip(raw_labels, targets.tolist()))
classes = set(raw_labels)
assert len(label_target_pairs) == len(classes) == len({t for _, t in label_target_pairs})
assert model.out_features == len(classes)  # one output per class in the file
print(f"check: all {trained_on} samples trained, one target per annotated class, {len(classes)} outputs")
# --- check: end
