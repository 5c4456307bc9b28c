"""Reproducer for cuda-device-mismatch.

`python repro.py`: the model is moved to the GPU with `model.to(device)`, but the batches
from the DataLoader stay where the Dataset made them, on the CPU, and the training loop
forgets to move them. The first `nn.Linear` calls `addmm` with a CPU input and CUDA
weights, and the dispatcher's device check raises
`RuntimeError: Expected all tensors to be on the same device, but ...` (the wording
depends on the release: `... but got mat1 is on cpu, different from other tensors on
cuda:0 (when checking argument in method wrapper_CUDA_addmm)` in recent ones, `... but
found at least two devices, cpu and cuda:0! (when checking argument for argument mat1 in
method wrapper_CUDA_addmm)` before).
`python repro.py --fixed`: every batch is moved to the model's device at the top of the
loop (from pinned memory, without blocking). The check trains a float64 copy of the same
initial model on the CPU, over the same batches in the same order, and requires the GPU
model's weights and its predictions on all 256 samples to equal that reference's.

Needs a CUDA GPU.
"""

import copy
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")
device = torch.device("cuda")


class Classifier(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


torch.manual_seed(0)
data = TensorDataset(torch.randn(256, 20), torch.randint(0, 3, (256,)))
SHUFFLE_SEED = 1  # the reference below replays the same batch order
loader = DataLoader(
    data, batch_size=32, shuffle=True, pin_memory=True, generator=torch.Generator().manual_seed(SHUFFLE_SEED)
)
initial = Classifier()  # kept on the CPU for the reference in the check
model = copy.deepcopy(initial).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

steps, samples_seen = 0, 0
for x, y in loader:  # the bug: x and y are CPU tensors
    if FIXED:
        # --- fix: start
        x = x.to(device, non_blocking=True)  # batches come off the DataLoader on the CPU
        y = y.to(device, non_blocking=True)
        # --- fix: end
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    steps += 1
    samples_seen += len(y)
print(f"trained {steps} steps on {device}, last loss {loss.item():.4f}")

# --- check: start
assert samples_seen == len(data), f"trained on {samples_seen} of {len(data)} samples"
assert all(p.device.type == "cuda" for p in model.parameters()), "the model left the GPU"
# Reference: the same initial weights trained in float64 on the CPU, over the same batches
# in the same order, with the same optimizer; the GPU run must end where it ends.
reference = copy.deepcopy(initial).double()
reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
replay = DataLoader(data, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(SHUFFLE_SEED))
for x_ref, y_ref in replay:
    reference_loss = torch.nn.functional.cross_entropy(reference(x_ref.double()), y_ref)
    reference_optimizer.zero_grad()
    reference_loss.backward()
    reference_optimizer.step()
for (name, trained), expected in zip(model.named_parameters(), reference.parameters(), strict=True):
    torch.testing.assert_close(trained.detach().cpu().double(), expected.detach(), rtol=1e-4, atol=1e-5, msg=name)
with torch.no_grad():
    logits = model(data.tensors[0].to(device)).cpu().double()
    expected_logits = reference(data.tensors[0].double())
torch.testing.assert_close(logits, expected_logits, rtol=1e-4, atol=1e-4)
print(f"check: trained on all {len(data)} samples on {device}; weights and logits equal a float64 CPU run")
# --- check: end
