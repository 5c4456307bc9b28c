"""Reproducer for loss-batch-size-mismatch.

`python repro.py`: a token tagger (embedding and linear layer) gives logits of shape
`(B, T, C)` for a batch of `B = 4` sentences of `T = 6` tokens; the training step
flattens the logits to `(B * T, C)` for `nn.CrossEntropyLoss` but passes the labels as
they come, `(B, T)`. The loss compares the first dimensions and raises
`ValueError: Expected input batch_size (24) to match target batch_size (4).`
`python repro.py --fixed`: the labels are flattened the same way, to `(B * T,)`, so each
token's logits meet that token's label.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

vocab, num_tags, batch, seq_len = 50, 5, 4, 6
tokens = torch.randint(0, vocab, (12, seq_len))  # 12 sentences of 6 tokens
tags = tokens % num_tags  # one tag per token, shape (12, 6)

model = nn.Sequential(nn.Embedding(vocab, 16), nn.Linear(16, num_tags))  # (B, T) -> (B, T, C)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)


def token_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return criterion(logits.view(-1, logits.size(-1)), labels)  # (B*T, C) against (B, T)


if FIXED:
# --- fix: start
    def token_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Cross-entropy over every token: flatten the logits and the labels alike."""
        return criterion(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))  # (B*T, C) and (B*T,)
# --- fix: end

tokens_trained = 0
for start in range(0, len(tokens), batch):
    x, y = tokens[start:start + batch], tags[start:start + batch]
    loss = token_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    tokens_trained += y.numel()
    print(f"batch at {start}: loss {loss.item():.4f}")

# --- check: start
# Reference: the negative log-likelihood of each token's own tag, token by token.
with torch.no_grad():
    loss_all = token_loss(model(tokens), tags).item()
    per_token = [
        -torch.log_softmax(model(tokens[i, t:t + 1])[0], dim=-1)[tags[i, t]].item()
        for i in range(len(tokens))
        for t in range(seq_len)
    ]
assert tokens_trained == tags.numel(), tokens_trained
assert math.isclose(loss_all, sum(per_token) / len(per_token), rel_tol=1e-5), loss_all
print(f"check: all {tokens_trained} tokens trained; the loss equals the mean per-token loss of each token's own tag")
# --- check: end
