"""Reproducer for dynamo-recompile-limit.

`python repro.py`: a function compiled with `dynamic=False` sees a new sequence length on
every call; each new shape fails a guard and recompiles until Dynamo hits its recompile
limit (8) and logs the warning.
`python repro.py --fixed`: sequence lengths are padded up to a multiple of 64, so the
compiled function only ever sees one shape and compiles once.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]


def score(tokens: torch.Tensor) -> torch.Tensor:
    return (tokens.float().softmax(dim=-1) * 2).sum()


compiled = torch.compile(score, backend="eager", dynamic=False)

# --- fix: start
def pad_to_bucket(tokens: torch.Tensor, multiple: int = 64) -> torch.Tensor:
    """Pad the last dimension up to a multiple, so few distinct shapes reach the compiler."""
    length = tokens.shape[-1]
    padded = -(-length // multiple) * multiple
    return F.pad(tokens, (0, padded - length))
# --- fix: end

for length in range(10, 22):  # twelve batches, twelve sequence lengths
    batch = torch.ones(2, length)
    compiled(pad_to_bucket(batch) if FIXED else batch)

print("compiled frames:", torch._dynamo.utils.counters["stats"]["unique_graphs"])
