"""Reproducer for cross-entropy-class-dim-last.

`python repro.py`: a GRU tagger returns logits shaped `(B, T, C) = (4, 7, 5)`, one row of
5 tag scores per token, the layout every RNN and transformer head gives; the tags are
`(B, T) = (4, 7)`, with padding tokens tagged -100. The training step passes both to
`nn.CrossEntropyLoss` as they are. The loss takes dimension 1 as the classes, so it reads
7 classes and 5 positions and expects a target of shape `[4, 5]`:
`RuntimeError: Expected target size [4, 5], got [4, 7]`.
`python repro.py --fixed`: the logits are transposed to `(B, C, T)`, the layout the loss
takes for a target per position, so each token's 5 scores meet that token's tag.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

vocab, num_tags, seq_len, batch, pad = 30, 5, 7, 4, -100
tokens = torch.randint(0, vocab, (12, seq_len))  # 12 sentences of 7 tokens
tags = tokens % num_tags  # one tag per token, shape (12, 7)
tags[::3, -2:] = pad  # every third sentence ends in two padding tokens


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.rnn = nn.GRU(16, 16, batch_first=True)
        self.head = nn.Linear(16, num_tags)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.embed(x))
        return self.head(out)  # (B, T) -> (B, T, C)


model = Tagger()
criterion = nn.CrossEntropyLoss(ignore_index=pad)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)


def token_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return criterion(logits, labels)  # (B, T, C) against (B, T): dimension 1 read as classes


if FIXED:
# --- fix: start
    def token_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Cross-entropy per token: move the classes to dimension 1, (B, T, C) -> (B, C, T)."""
        return criterion(logits.transpose(1, 2), labels)  # against labels (B, T)
# --- fix: end

tokens_trained = 0
for start in range(0, len(tokens), batch):
    x, y = tokens[start:start + batch], tags[start:start + batch]
    loss = token_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    tokens_trained += int((y != pad).sum())
    print(f"batch at {start}: loss {loss.item():.4f}")

# --- check: start
# Reference: each real token's negative log-likelihood of its own tag, by hand from its
# row of scores (log-sum-exp minus the tag's score), averaged over the tokens not padded.
with torch.no_grad():
    logits = model(tokens)  # (12, 7, 5)
    loss_all = token_loss(logits, tags).item()
    per_token = []
    for i in range(len(tokens)):
        for t in range(seq_len):
            tag = int(tags[i, t])
            if tag == pad:
                continue
            row = [float(v) for v in logits[i, t]]
            per_token.append(math.log(sum(math.exp(v) for v in row)) - row[tag])
    reference = sum(per_token) / len(per_token)
    flat = criterion(logits.reshape(-1, num_tags), tags.reshape(-1)).item()  # the other fix
assert tokens_trained == len(per_token) == int((tags != pad).sum()), tokens_trained
assert math.isclose(loss_all, reference, rel_tol=1e-5), (loss_all, reference)
assert math.isclose(flat, reference, rel_tol=1e-5), (flat, reference)
# Sentences as long as the number of tags (T == C == 5) raise nothing without the
# transpose: the loss then reads positions as classes and returns another number.
with torch.no_grad():
    short_x, short_y = tokens[:4, :num_tags], tags[:4, :num_tags]
    short_logits = model(short_x)  # (4, 5, 5)
    wrong_layout = criterion(short_logits, short_y).item()
    right_layout = token_loss(short_logits, short_y).item()
    short_ref = criterion(short_logits.reshape(-1, num_tags), short_y.reshape(-1)).item()
assert math.isclose(right_layout, short_ref, rel_tol=1e-5), (right_layout, short_ref)
assert not math.isclose(wrong_layout, short_ref, rel_tol=1e-3), (wrong_layout, short_ref)
print(
    f"check: {tokens_trained} tagged tokens trained; the loss {loss_all:.5f} equals the mean "
    f"per-token loss computed by hand {reference:.5f} and the flattened form {flat:.5f}; "
    f"with T == C the untransposed call gives {wrong_layout:.5f} instead of {short_ref:.5f}"
)
# --- check: end
