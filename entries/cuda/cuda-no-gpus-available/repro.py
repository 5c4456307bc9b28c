"""Reproducer for cuda-no-gpus-available.

`python repro.py`: a training script written for an eight-GPU server pins its run to one
GPU in its first lines, `os.environ["CUDA_VISIBLE_DEVICES"] = "7"`, before torch touches
CUDA. On a machine that has no GPU 7, CUDA then sees no device at all:
`torch.cuda.device_count()` is 0, and the first tensor moved to `cuda` makes
`torch.cuda._lazy_init` call `torch._C._cuda_init()`, which raises
`RuntimeError: No CUDA GPUs are available`. So that the script fails the same way on
any machine, it pins the first index this machine does not have (the count of GPUs that
a process sees without `CUDA_VISIBLE_DEVICES`; 1 on a one-GPU machine) instead of 7.
`python repro.py --fixed`: the script no longer pins a GPU; the launcher's
`CUDA_VISIBLE_DEVICES` (or every GPU, when it is unset) decides, and `cuda` is the first
visible GPU. The check confirms that the model trained on a GPU and that its weights
equal those of the same training run on the CPU.

Needs a CUDA GPU (one is enough).
"""

import os
import subprocess
import sys


def machine_gpu_count() -> int:
    """GPUs a process on this machine sees when CUDA_VISIBLE_DEVICES does not narrow them."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    probe = "import torch; print(torch.cuda.device_count())"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    return int(out.stdout.strip().splitlines()[-1])


FIXED = "--fixed" in sys.argv[1:]
gpus_on_machine = machine_gpu_count()
if gpus_on_machine == 0:
    sys.exit("this reproducer needs a CUDA GPU")

# The script's first lines: pin the run to "GPU 7", an index this machine does not have.
PINNED_GPU = str(gpus_on_machine)
if FIXED:
    # --- fix: start
    # Do not pin a GPU in the code: the launcher's CUDA_VISIBLE_DEVICES (all GPUs when
    # unset) decides which GPUs the run sees, and `cuda` is the first of them.
    PINNED_GPU = None
    # --- fix: end
if PINNED_GPU is not None:
    os.environ["CUDA_VISIBLE_DEVICES"] = PINNED_GPU
print(f"{gpus_on_machine} GPU(s) on this machine; CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r}", flush=True)

import torch  # noqa: E402  (CUDA_VISIBLE_DEVICES is read when CUDA initializes)

STEPS = 20


def train(device: str) -> torch.Tensor:
    """A few SGD steps of linear regression on fixed data; returns the final weights."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(256, 8, generator=gen)
    y = x @ torch.arange(1.0, 9.0).unsqueeze(1) + 0.1 * torch.randn(256, 1, generator=gen)
    model = torch.nn.Linear(8, 1)
    with torch.no_grad():
        model.weight.copy_(torch.linspace(-1.0, 1.0, 8).unsqueeze(0))
        model.bias.zero_()
    model = model.to(device)  # the first CUDA call initializes CUDA
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = x.to(device), y.to(device)
    for _ in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return torch.cat([model.weight.detach().flatten(), model.bias.detach()])


print(f"torch.cuda.device_count() = {torch.cuda.device_count()}", flush=True)
weights = train("cuda")
print(f"trained on {torch.cuda.get_device_name(0)}: {weights.cpu().tolist()}", flush=True)

# --- check: start
assert torch.cuda.device_count() >= 1, "no GPU visible"
assert weights.is_cuda, weights.device
reference = train("cpu")
torch.testing.assert_close(weights.cpu(), reference, rtol=1e-4, atol=1e-4)
print(f"check: trained on {weights.device} in {STEPS} steps; the weights equal the CPU run's")
# --- check: end
