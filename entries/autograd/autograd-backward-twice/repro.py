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

torch.manual_seed(0)
print("torch", torch.__version__)
rnn, head = nn.RNNCell(4, 8), nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
batches = [torch.randn(2, 4) for _ in range(3)]

h = torch.zeros(2, 8)
state_in, state_out, losses = [], [], []
for step, x in enumerate(batches):
    if FIXED:
        # --- fix: start
        h = h.detach()  # keep the hidden state's values, cut the link to the last batch's graph
        # --- fix: end
    state_in.append(h.detach().clone())
    h = rnn(x, h)
    state_out.append(h.detach().clone())
    loss = head(h).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # frees this graph's saved tensors, including the RNN step's
    optimizer.step()
    losses.append(loss.item())
    print(f"step {step}: loss {loss.item():.4f}")

# --- check: start
assert len(losses) == len(batches)
for step in range(1, len(batches)):
    # the state is carried over, not reset: each batch starts where the previous ended
    torch.testing.assert_close(state_in[step], state_out[step - 1])
print("check: every batch trained, each starting from the previous batch's final hidden state")
# --- check: end
