"""Reproducer for safetensors-non-contiguous-tensor.

`python repro.py`: a small convolutional network is trained in the channels-last memory
format (`model.to(memory_format=torch.channels_last)`, a common speed-up for convolutions),
and its weights are saved with `safetensors.torch.save_file(model.state_dict(), ...)`. The
4-D convolution weights are now stored channels-last, so they are not contiguous in the
default (row-major) order, and safetensors refuses the first one: `ValueError: You are
trying to save a non contiguous tensor: `0.weight` which is not allowed. ...`
`python repro.py --fixed`: every tensor is packed with `.contiguous()` before saving (the
values do not change, only their layout in memory). The check loads the file, compares
every tensor with the model's weights, loads them into a new network and compares its
outputs with the trained network's on the same inputs.
"""

import os
import sys
import tempfile

import torch
import torch.nn as nn
from safetensors.torch import load_file, save_file

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3, padding=1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2),
    )


model = make_model().to(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 3, 8, 8).to(memory_format=torch.channels_last)
y = torch.randint(0, 2, (4,))
for _ in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"trained; conv weight contiguous: {model[0].weight.is_contiguous()}")

state = model.state_dict()
if FIXED:
    # --- fix: start
    # Pack each tensor in the default memory layout; the values stay the same.
    state = {name: t.contiguous() for name, t in state.items()}
    # --- fix: end
path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
save_file(state, path)
print(f"saved {len(state)} tensors to {os.path.basename(path)}")

# --- check: start
loaded = load_file(path)
assert loaded.keys() == model.state_dict().keys()
for name, value in model.state_dict().items():
    assert torch.equal(loaded[name], value), f"{name} differs after the round trip"
restored = make_model()
restored.load_state_dict(loaded)
with torch.no_grad():
    torch.testing.assert_close(restored(x.contiguous()), model(x), rtol=0, atol=1e-6)
print("check: every saved tensor equals the trained weights; the reloaded model gives the same outputs")
# --- check: end
