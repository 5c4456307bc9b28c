"""Reproducer for dynamo-invalid-backend.

`python repro.py`: a training script reads its compile backend from its config
(`backend="fastbackend"`). That backend is provided by a plugin package, written here to a
temporary folder as `fastbackend_plugin.py`, that registers the name with
`torch._dynamo.register_backend` when it is imported, the way `import torch_tensorrt`,
`import intel_extension_for_pytorch` or `import openvino.torch` do. The script never
imports it, so `torch.compile` finds no backend of that name and raises
`torch._dynamo.exc.InvalidBackend: Invalid backend: 'fastbackend', ...` before any
tracing starts.
`python repro.py --fixed`: the script imports the plugin before `torch.compile` and checks
the name against `torch.compiler.list_backends()`; the model compiles and matches eager.
"""

import importlib
import os
import shutil
import sys
import tempfile
import textwrap

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

# A third-party backend package, as it would sit in site-packages.
PLUGIN = textwrap.dedent(
    """
    import torch


    @torch._dynamo.register_backend(name="fastbackend")
    def fastbackend(gm: torch.fx.GraphModule, example_inputs):
        print(f"fastbackend: compiling a graph of {len(gm.graph.nodes)} nodes")
        return gm.forward
    """
)
plugin_dir = tempfile.mkdtemp(prefix="repro-invalid-backend-")
with open(os.path.join(plugin_dir, "fastbackend_plugin.py"), "w") as f:
    f.write(PLUGIN)
sys.path.insert(0, plugin_dir)

config = {"compile_backend": "fastbackend"}

# --- fix: start
def ensure_backend(name: str) -> str:
    """Import the package that registers `name`, then check that it is registered."""
    importlib.import_module("fastbackend_plugin")  # registers "fastbackend" on import
    available = torch.compiler.list_backends(exclude_tags=())
    if name not in available:
        raise SystemExit(f"compile backend {name!r} is not registered; available: {available}")
    return name
# --- fix: end


try:
    backend = ensure_backend(config["compile_backend"]) if FIXED else config["compile_backend"]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    compiled = torch.compile(model, backend=backend)
    x = torch.randn(8, 16)
    with torch.no_grad():
        assert torch.allclose(compiled(x), model(x))
    print("compiled model matches eager")
finally:
    shutil.rmtree(plugin_dir, ignore_errors=True)
