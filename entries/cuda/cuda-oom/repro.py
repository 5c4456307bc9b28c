"""Reproducer for cuda-oom.

`python repro.py`: one training step of an MLP on a batch of 65,536 rows. The process is
capped at 1 GiB of GPU memory with `torch.cuda.set_per_process_memory_fraction`, so the
failure is the same on any GPU and never touches memory other processes use. The first
hidden activation of the forward pass is a 65,536 x 4,096 fp32 tensor (1 GiB), which the
caching allocator cannot fit under the cap next to the model and the data, so it raises
`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. ...`.
`python repro.py --fixed`: the same step with gradient accumulation. The batch is split
into 16 micro-batches that each fit, their gradients are summed (each loss is scaled by
1/16), and the optimizer steps once: the same update as the full batch, with
a sixteenth of the activation memory; it prints its peak memory. The check lifts the
cap and compares the accumulated gradients with the full-batch gradients computed from
the same starting weights.

Needs a CUDA GPU with at least 8 GiB of free memory (the check's full-batch reference
runs without the cap).
"""

import copy
import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
CAP_BYTES = 1 << 30  # the memory this "GPU" has for us: 1 GiB
BATCH, D_IN, D_HIDDEN, D_OUT = 65_536, 256, 4_096, 256

if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")

device = torch.device("cuda", 0)
total = torch.cuda.get_device_properties(device).total_memory
torch.cuda.set_per_process_memory_fraction(CAP_BYTES / total, device)
print(f"{torch.cuda.get_device_name(device)}: capped at {CAP_BYTES / 2**30:.2f} GiB "
      f"of {total / 2**30:.2f} GiB")

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(D_IN, D_HIDDEN),
    torch.nn.GELU(),
    torch.nn.Linear(D_HIDDEN, D_OUT),
).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
inputs = torch.randn(BATCH, D_IN, device=device)
targets = torch.randn(BATCH, D_OUT, device=device)
print(f"model and data: {torch.cuda.memory_allocated(device) / 2**20:.0f} MiB allocated")


def step() -> float:
    """Forward and backward over the whole batch at once."""
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    return loss.item()


if FIXED:
    # --- fix: start
    ACCUMULATION_STEPS = 16  # micro-batches per optimizer step; the effective batch is unchanged

    def step() -> float:
        """Forward and backward one micro-batch at a time; gradients add up in .grad."""
        total_loss = 0.0
        for x, y in zip(inputs.chunk(ACCUMULATION_STEPS), targets.chunk(ACCUMULATION_STEPS)):
            loss = torch.nn.functional.mse_loss(model(x), y) / ACCUMULATION_STEPS
            loss.backward()  # frees this micro-batch's activations before the next one
            total_loss += loss.item()
        return total_loss
    # --- fix: end


initial = copy.deepcopy(model)  # the weights before the step, for the check
optimizer.zero_grad(set_to_none=True)
loss = step()
optimizer.step()
torch.cuda.synchronize(device)
print(f"step done: loss {loss:.4f}, peak {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB "
      f"of the {CAP_BYTES / 2**20:.0f} MiB cap")

# --- check: start
# The reference: the original full-batch backward on the same weights, given the memory
# the cap withholds. Gradient accumulation must produce the same gradients.
torch.cuda.set_per_process_memory_fraction(1.0, device)
torch.nn.functional.mse_loss(initial(inputs), targets).backward()
for accumulated, full_batch in zip(model.parameters(), initial.parameters()):
    torch.testing.assert_close(accumulated.grad, full_batch.grad, rtol=1e-3, atol=1e-6)
print("check: the accumulated gradients equal the full-batch gradients")
# --- check: end
