"""Reproducer for fx-trace-dynamo-optimized.

`python repro.py`: a model compiles one of its blocks in `__init__` with `torch.compile`
(as some model code does for its hot path). A tool then runs `torch.fx.symbolic_trace` on
the whole model, as FX graph-mode quantization, feature extractors and FLOP counters do.
FX calls the compiled block with proxy objects; the compiled wrapper sees that FX
tracing is active and raises `RuntimeError: Detected that you are using FX to
symbolically trace a dynamo-optimized function. This is not supported at the moment.`
`python repro.py --fixed`: before tracing, every compiled submodule is swapped back for
the module it wraps (`OptimizedModule._orig_mod`); FX traces the plain model, and the
traced `GraphModule` is compiled afterwards. Its output matches the original model's.
"""

import sys

import torch
import torch.fx
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = torch.compile(Block(), backend="eager")  # compiled inside the model
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(x))


torch.manual_seed(0)
net = Net()
x = torch.randn(8, 16)
with torch.no_grad():
    expected = net(x)  # the model as written, before any tracing

to_trace = net
if FIXED:
    # --- fix: start
    def strip_compiled(module: nn.Module) -> nn.Module:
        """Replace every torch.compile'd submodule by the module it wraps, in place."""
        for name, child in module.named_children():
            if isinstance(child, torch._dynamo.eval_frame.OptimizedModule):
                setattr(module, name, child._orig_mod)
            else:
                strip_compiled(child)
        return module

    to_trace = strip_compiled(net)
    # --- fix: end

graph_module = torch.fx.symbolic_trace(to_trace)  # what FX-based tools do first
print("FX traced", len(graph_module.graph.nodes), "nodes")
compiled = torch.compile(graph_module, backend="eager")  # compile after the FX transform
with torch.no_grad():
    out = compiled(x)

# --- check: start
torch.testing.assert_close(out, expected)
print("check: traced and compiled model output equals the original model's")
# --- check: end
