"""Reproducer for tensor-bool-ambiguous.

`python repro.py`: a token-level loss helper takes an optional padding mask and tests it
with `if mask:`. Called with a real mask, a bool tensor of shape (batch, length), Python
asks the tensor for one truth value and torch refuses: `RuntimeError: Boolean value of
Tensor with more than one value is ambiguous`.
`python repro.py --fixed`: the helper tests `if mask is not None:`, the question it
meant to ask, so the masked mean averages only the real tokens.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def masked_mean(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask:  # meant: "was a mask given?"
        return (values * mask).sum() / mask.sum()
    return values.mean()


if FIXED:
# --- fix: start
    def masked_mean(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Mean of `values` over the positions where `mask` is True (all positions without a mask)."""
        if mask is not None:
            return (values * mask).sum() / mask.sum()
        return values.mean()
# --- fix: end


batch, length, vocab = 3, 6, 11
lengths = torch.tensor([6, 4, 2])
logits = torch.randn(batch, length, vocab)
targets = torch.randint(0, vocab, (batch, length))
mask = torch.arange(length)[None, :] < lengths[:, None]  # (batch, length), True on real tokens

token_losses = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (batch, length)
loss = masked_mean(token_losses, mask)
unmasked = masked_mean(token_losses)
print(f"masked loss {loss.item():.4f} over {int(mask.sum())} tokens, unmasked {unmasked.item():.4f}")

# --- check: start
# Reference: the mean loss of the real tokens only, sequence by sequence.
real = torch.cat([F.cross_entropy(logits[i, :n], targets[i, :n], reduction="none") for i, n in enumerate(lengths.tolist())])
assert real.numel() == int(lengths.sum()) == 12
torch.testing.assert_close(loss, real.mean())
torch.testing.assert_close(unmasked, token_losses.mean())
assert not torch.isclose(loss, unmasked)  # the padding really is left out
print("check: the masked loss equals the mean over the 12 real tokens; without a mask, the mean over all 18")
# --- check: end
