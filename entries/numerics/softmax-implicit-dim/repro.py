"""Reproducer for softmax-implicit-dim.

`python repro.py`: a sequence tagger scores every token of a batch, logits of shape
(batch 4, tokens 6, tags 5), and turns them into tag probabilities with
`F.softmax(logits)`, no `dim`. PyTorch warns `UserWarning: Implicit dimension choice
for softmax has been deprecated. Change the call to include dim=X as an argument.` and,
for a 3-D input, picks dim 0: each probability is normalised across the 4 sentences of
the batch instead of across the 5 tags, so a token's tag probabilities do not sum to 1
and change with whatever else is in the batch. The check then fails.
`python repro.py --fixed`: `dim=-1`, the tag axis; no warning. The check compares the
probabilities with a softmax over the tags written out by hand (exp, then divide by the
sum over the tags) and with the probabilities of each sentence scored alone.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
DIM = None  # the bug: no dim, so PyTorch picks one from the input's rank

if FIXED:
    # --- fix: start
    # Say which axis holds the classes: the last one, the tags.
    DIM = -1
    # --- fix: end

tagger = nn.Linear(8, 5)  # token features -> tag scores
tokens = torch.randn(4, 6, 8)  # (sentences, tokens, features)


def tag_probabilities(features: torch.Tensor) -> torch.Tensor:
    return F.softmax(tagger(features), dim=DIM)


with torch.no_grad():
    probs = tag_probabilities(tokens)
    alone = torch.cat([tag_probabilities(tokens[i : i + 1]) for i in range(4)])
print(f"probabilities {tuple(probs.shape)}; first token's sum over tags {probs[0, 0].sum().item():.4f}")

# --- check: start
# Reference: softmax over the tag axis written out by hand.
with torch.no_grad():
    logits = tagger(tokens)
    exps = torch.exp(logits - logits.max(dim=2, keepdim=True).values)
    expected = exps / exps.sum(dim=2, keepdim=True)
torch.testing.assert_close(probs, expected)
torch.testing.assert_close(probs.sum(dim=2), torch.ones(4, 6))
torch.testing.assert_close(alone, expected)  # a sentence's probabilities do not depend on its batch
print("check: every token's tag probabilities equal the hand-written softmax over the 5 tags, sum to 1 and do not depend on the batch")
# --- check: end
