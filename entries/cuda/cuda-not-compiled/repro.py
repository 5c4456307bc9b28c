"""Reproducer for cuda-not-compiled.

`python repro.py`: a training script written on a GPU machine hard-codes `"cuda"` and is
run on a CPU-only build of torch (the default `pip install torch` wheel on macOS and
Windows, the `+cpu` wheel, or a CPU-only container image). Moving the model to `"cuda"`
makes `torch.cuda._lazy_init()` find no CUDA bindings in `torch._C` and raise
`AssertionError: Torch not compiled with CUDA enabled`.
`python repro.py --fixed`: the device is chosen from what the installed build and machine
offer, so the same script trains on the CPU here and on the GPU where there is one.

Run it with a CPU-only build of torch; with a CUDA build the broken mode has nothing to
show.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]

print(f"torch {torch.__version__}, built with CUDA: {torch.version.cuda}")


# --- fix: start
def pick_device() -> torch.device:
    """The best device this build of torch and this machine actually have."""
    if torch.cuda.is_available():  # False on CPU-only builds, never raises
        return torch.device("cuda")
    if torch.backends.mps.is_available():  # Apple silicon
        return torch.device("mps")
    return torch.device("cpu")
# --- fix: end


device = pick_device() if FIXED else torch.device("cuda")  # the bug: hard-coded "cuda"
print(f"training on {device}")

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = torch.randn(64, 16), torch.randint(0, 4, (64,))

for step in range(3):
    loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
