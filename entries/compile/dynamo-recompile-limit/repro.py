"""Reproducer for dynamo-recompile-limit.

`python repro.py`: attention pooling (softmax over the sequence, then a weighted sum) is
compiled with `dynamic=False` and called on batches of twelve different sequence lengths.
Each new length fails a guard and recompiles until Dynamo hits its recompile limit (8),
logs the warning and runs the function eagerly from then on.
`python repro.py --fixed`: each batch is padded up to a multiple of 64 positions, with the
padded logits set to `-inf` so softmax gives them weight 0 (the padding is masked). The
compiled function sees one shape and compiles once, and every result equals eager pooling
over the unpadded batch.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]


def pool(logits: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Attention pooling over the last dimension (the sequence)."""
    return (logits.softmax(dim=-1) * values).sum(dim=-1)


compiled = torch.compile(pool, backend="eager", dynamic=False)


def prepare(logits: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return logits, values


if FIXED:
    # --- fix: start
    def prepare(logits: torch.Tensor, values: torch.Tensor, multiple: int = 64):
        """Pad the sequence up to a multiple of 64, masking the padding out of the softmax."""
        extra = -logits.shape[-1] % multiple
        masked_logits = F.pad(logits, (0, extra), value=float("-inf"))  # softmax weight 0
        return masked_logits, F.pad(values, (0, extra))
    # --- fix: end


torch.manual_seed(0)
batches = [(torch.randn(2, length), torch.randn(2, length)) for length in range(10, 22)]
results = [compiled(*prepare(logits, values)) for logits, values in batches]
print("compiled frames:", torch._dynamo.utils.counters["stats"]["unique_graphs"])

# --- check: start
for (logits, values), result in zip(batches, results):
    torch.testing.assert_close(result, pool(logits, values))  # eager, unpadded
print("check: all 12 compiled results equal eager pooling over the unpadded batches")
# --- check: end
