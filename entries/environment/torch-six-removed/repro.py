"""Reproducer for torch-six-removed.

`python repro.py`: a training script uses a vendored helper package written for torch 1.x
(the pattern of old apex, Megatron, timm and detection code bases): `clip_grad.py` does
`from torch._six import inf`, `collate.py` imports `string_classes` and `container_abcs`
from it, and `checks.py` reads `torch._six.string_classes` as an attribute. On torch 2.x,
which no longer has `torch._six`, the imports fail with
`ModuleNotFoundError: No module named 'torch._six'` and the attribute access with
`AttributeError: module 'torch' has no attribute '_six'`.
`python repro.py --fixed`: the same helper package with each `torch._six` name replaced by
what it stood for on Python 3 (`math.inf`, `(str, bytes)`, `collections.abc`, `int`); the
script clips gradients and collates a batch. The check compares the batch with
`default_collate`'s and the norm and clipped gradients with torch's own computation.

The helper package is written to a temporary folder and removed afterwards.
"""

import importlib
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

import torch
from torch.utils.data import default_collate

FIXED = "--fixed" in sys.argv[1:]

LEGACY_PACKAGE = {
    "__init__.py": "",
    "clip_grad.py": '''
import torch
from torch._six import inf


def clip_grad_norm(parameters, max_norm, norm_type=2):
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == inf:
        total = max(g.abs().max() for g in grads)
    else:
        total = torch.norm(torch.stack([torch.norm(g, norm_type) for g in grads]), norm_type)
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for g in grads:
            g.mul_(scale)
    return total
''',
    "collate.py": '''
import torch
from torch._six import container_abcs, int_classes, string_classes


def collate(batch):
    elem = batch[0]
    if isinstance(elem, torch.Tensor):
        return torch.stack(batch)
    if isinstance(elem, int_classes):
        return torch.tensor(batch)
    if isinstance(elem, string_classes):
        return list(batch)
    if isinstance(elem, container_abcs.Mapping):
        return {key: collate([d[key] for d in batch]) for key in elem}
    raise TypeError(type(elem))
''',
    "checks.py": '''
import torch


def is_path(value):
    return isinstance(value, torch._six.string_classes)
''',
}

def as_vendored(source: str) -> str:
    return source  # the helper package as it was written for torch 1.x


if FIXED:
    # --- fix: start
    # What each torch._six name was on Python 3 (torch 1.x, torch/_six.py).
    TORCH_SIX_REPLACEMENTS = {
        "from torch._six import inf": "from math import inf  # or: from torch import inf",
        "from torch._six import container_abcs, int_classes, string_classes": (
            "import collections.abc as container_abcs\n"
            "int_classes = int\n"
            "string_classes = (str, bytes)"
        ),
        "torch._six.string_classes": "(str, bytes)",
    }

    def as_vendored(source: str) -> str:
        """The helper package ported off torch._six."""
        for old, new in TORCH_SIX_REPLACEMENTS.items():
            source = source.replace(old, new)
        return source
    # --- fix: end


def write_package(root: Path) -> None:
    package = root / "legacy_utils"
    package.mkdir()
    for name, source in LEGACY_PACKAGE.items():
        (package / name).write_text(as_vendored(source))


def train_step(clip_grad, collate, checks):
    """Collate a batch, backpropagate, clip; return what the check compares."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    batch = collate.collate(SAMPLES)
    loss = torch.nn.functional.cross_entropy(model(batch["x"]), batch["label"])
    loss.backward()
    unclipped = [p.grad.clone() for p in model.parameters()]  # kept for the check
    norm = clip_grad.clip_grad_norm(list(model.parameters()), max_norm=MAX_NORM)
    paths_ok = all(checks.is_path(path) for path in batch["path"])
    print(f"loss {loss.item():.4f}, grad norm {norm.item():.4f}, paths are strings: {paths_ok}")
    return batch, norm, model, unclipped, paths_ok


MAX_NORM = 0.1
torch.manual_seed(0)
SAMPLES = [{"x": torch.randn(4), "label": i % 2, "path": f"img{i}.png"} for i in range(8)]
root = Path(tempfile.mkdtemp(prefix="repro-torch-six-"))
result = None
try:
    write_package(root)
    sys.path.insert(0, str(root))
    modules = {}
    for name in ("clip_grad", "collate", "checks"):
        try:
            modules[name] = importlib.import_module(f"legacy_utils.{name}")
        except ImportError:
            traceback.print_exc()
    try:
        # `checks` imports fine either way: the attribute form fails only when the line runs
        print("is_path('img0.png'):", modules["checks"].is_path("img0.png"))
        if len(modules) == 3:
            result = train_step(modules["clip_grad"], modules["collate"], modules["checks"])
    except AttributeError:
        traceback.print_exc()
finally:
    shutil.rmtree(root, ignore_errors=True)

# --- check: start
assert result is not None, "the helper package did not import and run"
batch, norm, model, unclipped, paths_ok = result
expected_batch = default_collate(SAMPLES)
torch.testing.assert_close(batch["x"], expected_batch["x"])
torch.testing.assert_close(batch["label"], expected_batch["label"])
assert batch["path"] == expected_batch["path"] and paths_ok
expected_norm = torch.nn.utils.get_total_norm(unclipped)
torch.testing.assert_close(norm, expected_norm)
scale = min(1.0, MAX_NORM / (expected_norm.item() + 1e-6))  # clip_grad_norm_'s coefficient
for parameter, grad in zip(model.parameters(), unclipped):
    torch.testing.assert_close(parameter.grad, grad * scale)
print("check: the batch equals default_collate's; the norm and clipped gradients equal torch's")
# --- check: end
