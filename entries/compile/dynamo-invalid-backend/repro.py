"""Reproducer for dynamo-invalid-backend.

`python repro.py`: a training script reads its compile backend from its config
(`backend="fastbackend"`). That backend is provided by a plugin package (the sibling file
`fastbackend_plugin.py` stands in for it) that registers the name with
`torch._dynamo.register_backend` when it is imported, the way `import torch_tensorrt`,
`import intel_extension_for_pytorch` or `import openvino.torch` do. The script never
imports it, so `torch.compile` finds no backend of that name and raises
`torch._dynamo.exc.InvalidBackend: Invalid backend: 'fastbackend', ...` before any
tracing starts.
`python repro.py --fixed`: the script imports the plugin before `torch.compile` and checks
the name against `torch.compiler.list_backends()`; the configured backend compiles the
model and its output matches eager.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

config = {"compile_backend": "fastbackend"}

if FIXED:
    # --- fix: start
    import fastbackend_plugin  # noqa: F401  (registers the "fastbackend" backend on import)

    if config["compile_backend"] not in torch.compiler.list_backends(exclude_tags=()):
        raise SystemExit(f"compile backend {config['compile_backend']!r} is not registered")
    # --- fix: end

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
compiled = torch.compile(model, backend=config["compile_backend"])
x = torch.randn(8, 16)
with torch.no_grad():
    out = compiled(x)
    expected = model(x)
print("compiled model ran:", tuple(out.shape))

# --- check: start
from fastbackend_plugin import compiled_graphs  # noqa: E402

assert len(compiled_graphs) == 1, "the configured backend compiled the model"
torch.testing.assert_close(out, expected)
print("check: 'fastbackend' compiled the model, and its output equals eager output")
# --- check: end
