"""Reproducer for inference-tensor-inplace-update.

`python repro.py`: an evaluation step sums its batch losses inside
`torch.inference_mode()`, so the running total is an inference tensor. The averaging
line, `test_loss /= len(loader)`, sits after the `with` block (one indentation level
out, as in many tutorials), and an in-place update of an inference tensor outside
inference mode raises `RuntimeError: Inplace update to inference tensor outside
InferenceMode is not allowed.`
`python repro.py --fixed`: the total is cloned after the block, as the message
suggests, which gives a normal tensor that may be updated in place. The check compares
the averaged loss and accuracy with the same metrics computed over the whole test set at
once.
"""

import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

g = torch.Generator().manual_seed(0)
X, y = torch.randn(40, 5, generator=g), torch.randint(0, 3, (40,), generator=g)
loader = DataLoader(TensorDataset(X, y), batch_size=8)  # five equal batches
torch.manual_seed(0)
model = torch.nn.Linear(5, 3)

model.eval()
with torch.inference_mode():
    test_loss, test_acc = 0, 0
    for xb, yb in loader:
        logits = model(xb)
        test_loss += F.cross_entropy(logits, yb)  # an inference tensor from here on
        test_acc += (logits.argmax(dim=1) == yb).float().mean()
if FIXED:
    # --- fix: start
    test_loss, test_acc = test_loss.clone(), test_acc.clone()  # normal tensors again
    # --- fix: end
test_loss /= len(loader)  # in place, outside inference mode
test_acc /= len(loader)
print(f"test loss {test_loss.item():.5f} | test acc {test_acc.item():.3f}")

# --- check: start
with torch.no_grad():  # the same metrics over the whole test set at once
    logits = model(X)
    ref_loss = F.cross_entropy(logits, y)
    ref_acc = (logits.argmax(dim=1) == y).float().mean()
assert not test_loss.is_inference() and not test_acc.is_inference()
torch.testing.assert_close(test_loss, ref_loss, rtol=1e-6, atol=1e-7)
torch.testing.assert_close(test_acc, ref_acc, rtol=1e-6, atol=1e-7)
print("check: the averaged loss and accuracy equal the whole-set metrics")
# --- check: end
