"""Reproducer for tensor-to-scalar-multiple-elements.

`python repro.py`: an evaluation loop over 10 samples in batches of 4 keeps per-sample
losses (`reduction="none"`) but still adds them up with `.item()`, which needs a
one-element tensor: `RuntimeError: a Tensor with 4 elements cannot be converted to
Scalar`. The same script then turns the list of per-sample embedding vectors into a
matrix with `torch.tensor(rows)`, which converts every row to a Python number:
`ValueError: only one element tensors can be converted to Python scalars`.
`python repro.py --fixed`: each batch's losses are summed before `.item()` (the mean is
taken over all samples at the end), and the rows are joined with `torch.stack`.
"""

import sys
import traceback

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def batch_loss_total(losses: torch.Tensor) -> float:
    return losses.item()  # written when the loss was a mean, one element per batch


def to_matrix(rows: list) -> torch.Tensor:
    return torch.tensor(rows)


if FIXED:
# --- fix: start
    def batch_loss_total(losses: torch.Tensor) -> float:
        """Sum of the batch's per-sample losses, as one Python number."""
        return losses.sum().item()

    def to_matrix(rows: list) -> torch.Tensor:
        """Join equal-length 1-D tensors into one (len(rows), D) tensor."""
        return torch.stack(rows)
# --- fix: end


features, labels = torch.randn(10, 6), torch.randint(0, 3, (10,))
loader = DataLoader(TensorDataset(features, labels), batch_size=4)
embed, head = nn.Linear(6, 5), nn.Linear(5, 3)

with torch.no_grad():
    try:
        total = 0.0
        for x, y in loader:
            losses = F.cross_entropy(head(embed(x)), y, reduction="none")  # one loss per sample
            total += batch_loss_total(losses)
        mean_loss = total / len(features)
        print(f"mean loss {mean_loss:.4f}")
    except RuntimeError:
        traceback.print_exc()  # keep going: show the second conversion
    rows = [embed(x) for x in features]  # one (5,) embedding per sample
    embeddings = to_matrix(rows)
    print(f"embeddings {tuple(embeddings.shape)}")

# --- check: start
with torch.no_grad():
    # Reference: the same model on all 10 samples at once.
    expected_loss = F.cross_entropy(head(embed(features)), labels).item()
    expected_embeddings = embed(features)
assert abs(mean_loss - expected_loss) < 1e-6, (mean_loss, expected_loss)
assert embeddings.shape == (10, 5), embeddings.shape
torch.testing.assert_close(embeddings, expected_embeddings)
print("check: the mean loss over all 10 samples (last batch of 2 included) and every embedding row match the full-batch computation")
# --- check: end
