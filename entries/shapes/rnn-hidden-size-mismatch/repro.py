"""Reproducer for rnn-hidden-size-mismatch.

`python repro.py`: a sentiment classifier scores 20 reviews in batches of 8. Its
two-layer LSTM starts each batch from a zero state built once, before the loop, for
`batch_size=8`; the last batch holds only the 4 reviews left, and the LSTM raises
"Expected hidden[0] size (2, 4, 16), got [2, 8, 16]".
`python repro.py --fixed`: the zero state is built for each batch from that batch's
own size, so the last, smaller batch is scored too.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
REVIEWS, STEPS, FEATURES, HIDDEN, LAYERS, BATCH_SIZE = 20, 5, 6, 16, 2, 8


class Classifier(nn.Module):
    """A stateful-style LSTM classifier: the caller passes the initial state."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, 1)

    def init_hidden(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        zeros = torch.zeros(LAYERS, batch_size, HIDDEN)
        return zeros, zeros.clone()

    def forward(self, x: torch.Tensor, hidden: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        out, _ = self.lstm(x, hidden)
        return torch.sigmoid(self.head(out[:, -1])).squeeze(-1)


model = Classifier().eval()
reviews = torch.randn(REVIEWS, STEPS, FEATURES)
loader = DataLoader(TensorDataset(reviews), batch_size=BATCH_SIZE)
hidden = model.init_hidden(BATCH_SIZE)  # built once, for a full batch


def state_for(batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The initial state each batch starts from."""
    return hidden


if FIXED:
# --- fix: start
    def state_for(batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # one state row per sample in *this* batch: the last batch may be smaller
        return model.init_hidden(batch.size(0))
# --- fix: end

scores = []
with torch.no_grad():
    for (batch,) in loader:
        scores.append(model(batch, state_for(batch)))
scores = torch.cat(scores)
print("scored reviews:", scores.numel())

# --- check: start
# reference: each review scored on its own, from a zero state of batch size one
with torch.no_grad():
    expected = torch.cat([model(reviews[i : i + 1], model.init_hidden(1)) for i in range(REVIEWS)])
assert scores.numel() == REVIEWS, scores.numel()  # every review scored, none dropped
torch.testing.assert_close(scores, expected, rtol=1e-5, atol=1e-6)
print("check: all 20 reviews scored, each as the same model scores it alone")
# --- check: end
