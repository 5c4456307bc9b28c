"""Reproducer for too-many-indices.

`python repro.py`: a time-series pipeline pads each batch into a
(batch, max_len, features) tensor with `X[i, :end, :] = feature[:end, :]`, written for
samples of shape (length, features). A dataset of one variable loads each series as a
1-D tensor of shape (length,), so the two-index slice `feature[:end, :]` raises
"too many indices for tensor of dimension 1".
`python repro.py --fixed`: a one-variable series is given its feature axis,
`unsqueeze(-1)` to (length, 1), before padding, as the padding code expects.
"""

import sys

import torch
from torch.nn.utils.rnn import pad_sequence

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
lengths = [5, 3, 7, 4]
# one recorded variable per series: read from a column, each is 1-D, shape (length,)
series = [torch.randn(length) for length in lengths]
MAX_LEN, FEAT_DIM = 6, 1


def pad_batch(features: list[torch.Tensor], max_len: int, feat_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad or cut samples of shape (length, feat_dim) to max_len; mask marks real steps."""
    padded = torch.zeros(len(features), max_len, feat_dim)
    mask = torch.zeros(len(features), max_len, dtype=torch.bool)
    for i, feature in enumerate(features):
        end = min(len(feature), max_len)
        padded[i, :end, :] = feature[:end, :]
        mask[i, :end] = True
    return padded, mask


features = series
if FIXED:
# --- fix: start
    # a series of one variable is (length,); give it the feature axis: (length, 1)
    features = [feature.unsqueeze(-1) if feature.ndim == 1 else feature for feature in series]
# --- fix: end

padded, mask = pad_batch(features, MAX_LEN, FEAT_DIM)
print("batch:", tuple(padded.shape), "real steps:", mask.sum(dim=1).tolist())

# --- check: start
# reference: torch's own padding of the raw series, cut to MAX_LEN
reference = pad_sequence([s[:MAX_LEN] for s in series], batch_first=True)
reference = torch.nn.functional.pad(reference, (0, MAX_LEN - reference.shape[1]))
torch.testing.assert_close(padded[..., 0], reference, rtol=0, atol=0)
assert mask.sum(dim=1).tolist() == [min(length, MAX_LEN) for length in lengths]
assert not padded[~mask].any()  # padding is zero, every real step kept
print("check: the padded batch holds every series' values as torch's pad_sequence does")
# --- check: end
