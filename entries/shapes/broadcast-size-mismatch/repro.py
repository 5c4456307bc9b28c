"""Reproducer for broadcast-size-mismatch.

`python repro.py`: a next-token language-model loss. The logits and labels are shifted by
one position (`logits[:, :-1]` against `labels[:, 1:]`), so the per-token loss has 3
positions, but the padding mask applied to it is the unshifted attention mask with 4.
`per_token * mask` cannot broadcast `(2, 3)` against `(2, 4)`:
`The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1`.
`python repro.py --fixed`: the mask is shifted the same way as the labels, so it has the
loss's shape and the masked mean is computed.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

batch, seq_len, vocab = 2, 4, 10
logits = torch.randn(batch, seq_len, vocab)
labels = torch.randint(0, vocab, (batch, seq_len))
attention_mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])  # second sequence is padded

# Predict token t+1 from position t: drop the last logit and the first label.
shift_logits = logits[:, :-1]  # (2, 3, 10)
shift_labels = labels[:, 1:]  # (2, 3)
per_token = F.cross_entropy(
    shift_logits.reshape(-1, vocab), shift_labels.reshape(-1), reduction="none"
).view(batch, seq_len - 1)  # (2, 3)

mask = attention_mask  # (2, 4): still the unshifted length
if FIXED:
# --- fix: start
    # Shift the mask like the labels: it marks which *targets* are real tokens.
    mask = attention_mask[:, 1:]  # (2, 3)
# --- fix: end

print("per-token loss", tuple(per_token.shape), "mask", tuple(mask.shape))
loss = (per_token * mask).sum() / mask.sum()
print(f"masked loss {loss.item():.4f}")

# --- check: start
# Reference: each sequence cut to its real tokens (right padding), shifted, no mask at all.
lengths = attention_mask.sum(dim=1).tolist()  # [4, 3]
unpadded = [
    F.cross_entropy(logits[i, : n - 1], labels[i, 1:n], reduction="none") for i, n in enumerate(lengths)
]
torch.testing.assert_close(loss, torch.cat(unpadded).mean())
print("check: masked loss equals the mean loss over the real target tokens, computed unpadded")
# --- check: end
