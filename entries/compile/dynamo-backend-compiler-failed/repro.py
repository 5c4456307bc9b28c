"""Reproducer for dynamo-backend-compiler-failed.

`python repro.py`: a custom `torch.compile` backend (standing in for an exporter or
accelerator compiler that supports a fixed set of ops) receives the FX graph Dynamo
captured, meets an op it has no lowering for (GELU) and raises. Dynamo wraps that
exception in `BackendCompilerFailed: backend='npu_compiler' raised:` on the first call.
`python repro.py --fixed`: the backend checks the graph first and, for a graph it cannot
lower, returns `gm.forward` (run the captured graph as ordinary PyTorch) instead of
raising: the model runs, and the log says which op was not supported.
"""

import sys

import torch
import torch.fx

FIXED = "--fixed" in sys.argv[1:]

SUPPORTED = {torch._C._nn.linear, torch.relu, torch.nn.functional.relu}


def unsupported_ops(gm: torch.fx.GraphModule) -> list[str]:
    """Call targets in the captured graph that this backend has no lowering for."""
    return [
        getattr(node.target, "__name__", str(node.target))
        for node in gm.graph.nodes
        if node.op == "call_function" and node.target not in SUPPORTED
    ]


def npu_compiler(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
    """A backend that can only lower linear and relu."""
    missing = unsupported_ops(gm)
    if missing:
        raise NotImplementedError(f"no lowering for {missing[0]}")
    return gm.forward  # stands in for the compiled artifact


backend = npu_compiler
if FIXED:
    # --- fix: start
    def with_eager_fallback(backend):
        """Wrap a backend so a graph it cannot lower runs as plain PyTorch instead of raising."""

        def guarded(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
            missing = unsupported_ops(gm)
            if missing:
                print(f"{backend.__name__}: falling back to eager for a graph with {missing}")
                return gm.forward
            return backend(gm, example_inputs)

        guarded.__name__ = backend.__name__
        return guarded

    backend = with_eager_fallback(npu_compiler)
    # --- fix: end

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 2))
compiled = torch.compile(model, backend=backend)
x = torch.randn(4, 8)
out = compiled(x)  # Dynamo captures the graph and calls the backend here
print("compiled model ran: output", tuple(out.shape))

# --- check: start
with torch.no_grad():
    expected = model(x)  # the plain eager model
torch.testing.assert_close(out, expected)
print("check: compiled model output equals eager output")
# --- check: end
