"""Reproducer for bf16-tensor-numpy-unsupported.

`python repro.py`: a classifier is evaluated in bfloat16 (the model is cast with
`.to(torch.bfloat16)`, as for bf16 training or inference), and the evaluation loop hands
the logits to NumPy to compute accuracy and to save them with `np.save`. NumPy has no
bfloat16 dtype, so `logits.cpu().numpy()` raises `TypeError: Got unsupported ScalarType
BFloat16`.
`python repro.py --fixed`: the logits are converted to float32 before `.numpy()`. Every
bfloat16 value is exactly representable in float32, so nothing is lost. The check
asserts that the saved array holds exactly the model's bfloat16 logits and that the
NumPy accuracy equals the accuracy computed in torch on the same logits.
"""

import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 5)).to(torch.bfloat16).eval()
batches = [(torch.randn(16, 20), torch.randint(0, 5, (16,))) for _ in range(4)]


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()  # the bug: bfloat16 has no NumPy dtype


if FIXED:
    # --- fix: start
    def to_numpy(t: torch.Tensor) -> np.ndarray:
        # float32 holds every bfloat16 value exactly: convert before leaving torch
        return t.detach().to(torch.float32).cpu().numpy()
    # --- fix: end


all_logits, all_labels, kept = [], [], []
with torch.no_grad():
    for x, y in batches:
        logits = model(x.to(torch.bfloat16))
        kept.append(logits)
        all_logits.append(to_numpy(logits))
        all_labels.append(y.numpy())
logits_np = np.concatenate(all_logits)
labels_np = np.concatenate(all_labels)
accuracy = float((logits_np.argmax(axis=1) == labels_np).mean())
path = os.path.join(tempfile.mkdtemp(), "logits.npy")
np.save(path, logits_np)
print(f"accuracy {accuracy:.4f}; saved logits {logits_np.shape} {logits_np.dtype} to {os.path.basename(path)}")

# --- check: start
reference = torch.cat(kept)  # the model's bfloat16 logits, never converted
saved = np.load(path)
assert saved.shape == tuple(reference.shape)
assert torch.equal(torch.from_numpy(saved), reference.to(torch.float32)), "values changed on the way to NumPy"
assert torch.equal(torch.from_numpy(saved).to(torch.bfloat16), reference), "not the bfloat16 values"
torch_accuracy = (reference.argmax(dim=1) == torch.cat([y for _, y in batches])).float().mean().item()
assert accuracy == torch_accuracy, (accuracy, torch_accuracy)
print(f"check: saved logits equal the bfloat16 logits exactly; accuracy {accuracy:.4f} as in torch")
# --- check: end
