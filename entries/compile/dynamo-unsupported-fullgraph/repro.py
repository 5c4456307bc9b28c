"""Reproducer for dynamo-unsupported-fullgraph.

`python repro.py`: a module compiled with `fullgraph=True` prints a statistic of its
activations from inside `forward` (print-debugging left in a model). Dynamo does not trace
the builtin `print` with a tensor argument, and under `fullgraph=True` it may not break
the graph around it, so it raises `torch._dynamo.exc.Unsupported: Failed to trace builtin
operator`.
`python repro.py --fixed`: `print` is registered in
`torch._dynamo.config.reorderable_logging_functions`, as the message's hint says; Dynamo
then keeps the call out of the graph and runs it after the graph, so the model compiles as
one graph and the statistic is still printed.
"""

import contextlib
import io
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.proj(x))
        # Print-debugging left in the model: a builtin Dynamo cannot put into a graph.
        print("activation mean:", h.mean())
        return h * 2


if FIXED:
    # --- fix: start
    # Dynamo moves calls to these functions after the graph instead of breaking it.
    torch._dynamo.config.reorderable_logging_functions.add(print)
    # --- fix: end


torch.manual_seed(0)
model = Block()
compiled = torch.compile(model, backend="eager", fullgraph=True)
x = torch.rand(4, 16)
printed = io.StringIO()
with torch.no_grad(), contextlib.redirect_stdout(printed):
    out = compiled(x)
print(printed.getvalue(), end="")
print("compiled graphs:", torch._dynamo.utils.counters["stats"]["unique_graphs"])

# --- check: start
eager_printed = io.StringIO()
with torch.no_grad(), contextlib.redirect_stdout(eager_printed):
    expected = model(x)  # the same module, run eagerly
torch.testing.assert_close(out, expected)
assert printed.getvalue() == eager_printed.getvalue(), (printed.getvalue(), eager_printed.getvalue())
print("check: compiled output and printed statistic equal the eager module's")
# --- check: end
