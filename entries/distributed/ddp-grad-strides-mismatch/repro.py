"""Reproducer for ddp-grad-strides-mismatch.

`python repro.py`: a small convolutional network is wrapped in `DistributedDataParallel`
(one process, gloo backend, on CPU) and only then switched to the channels_last memory
format for speed. DDP built its gradient buckets for the contiguous parameters it saw at
construction; the gradients now come in channels_last strides, and every backward warns
`UserWarning: Grad strides do not match bucket view strides. This may indicate grad was
not created according to the gradient layout contract, or that the param's strides
changed since DDP was constructed.  This is not an error, but may impair performance.`.
The buckets no longer describe the parameters: the reduced gradient of the 3x3
convolution's weight comes back wrong, the trained weights drift from the reference, and
the check fails.
`python repro.py --fixed`: the model is converted to channels_last *before* it is
wrapped, so the buckets match the gradients; no warning. The check compares the trained
weights with the same network trained without DDP from the same start.
"""

import copy
import os
import socket
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 4, 1), nn.Flatten(), nn.Linear(4 * 8 * 8, 2))
reference = copy.deepcopy(model)  # the same start, trained without DDP for the check
images, labels = torch.randn(16, 3, 10, 10), torch.randint(0, 2, (16,))

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
dist.init_process_group("gloo", rank=0, world_size=1)


def wrap(model: nn.Module) -> nn.Module:
    ddp = DistributedDataParallel(model)
    model.to(memory_format=torch.channels_last)  # changes the parameters' strides after DDP saw them
    return ddp


if FIXED:
# --- fix: start
    def wrap(model: nn.Module) -> nn.Module:
        """Set the memory format first, then let DDP build its buckets for those strides."""
        model.to(memory_format=torch.channels_last)
        return DistributedDataParallel(model)
# --- fix: end


try:
    ddp_model = wrap(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    for _step in range(5):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(ddp_model(images.to(memory_format=torch.channels_last)), labels)
        loss.backward()
        optimizer.step()
    print(f"final loss {loss.item():.4f}")
finally:
    dist.destroy_process_group()

# --- check: start
# Reference: the same network, same start and data, trained with plain SGD and no DDP.
ref_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
for _step in range(5):
    ref_optimizer.zero_grad()
    nn.functional.cross_entropy(reference(images), labels).backward()
    ref_optimizer.step()
for (name, trained), expected in zip(model.named_parameters(), reference.parameters()):
    torch.testing.assert_close(trained, expected, msg=name)
print("check: every trained weight equals the one trained without DDP from the same start")
# --- check: end
