"""Reproducer for autograd-backward-twice.

`python repro.py`: an RNN carries its hidden state `h` from one batch to the next without
detaching it. The second batch's loss reaches back through `h` into the first batch's
graph, whose saved tensors the first `loss.backward()` already freed.
`python repro.py --fixed`: `h` is detached at the start of each batch (truncated
backpropagation through time), so each backward only walks its own batch's graph.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]

# --- fix: start
def carry_state(h: torch.Tensor) -> torch.Tensor:
    """Keep the hidden state's values but cut its link to the previous batch's graph."""
    return h.detach()
# --- fix: end

torch.manual_seed(0)
print("torch", torch.__version__)
rnn, head = nn.RNNCell(4, 8), nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)

h = torch.zeros(2, 8)
for step in range(3):
    if FIXED:
        h = carry_state(h)
    h = rnn(torch.randn(2, 4), h)
    loss = head(h).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # frees this graph's saved tensors, including the RNN step's
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
