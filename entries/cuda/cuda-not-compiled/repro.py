"""Reproducer for cuda-not-compiled.

`python repro.py`: a training script written on a GPU machine hard-codes `"cuda"` and is
run on a CPU-only build of torch (the default `pip install torch` wheel on macOS and
Windows, the `+cpu` wheel, or a CPU-only container image). Moving the model to `"cuda"`
makes `torch.cuda._lazy_init()` find no CUDA bindings in `torch._C` and raise
`AssertionError: Torch not compiled with CUDA enabled`.
`python repro.py --fixed`: the device is chosen once, from what the installed build and
machine offer, and printed. The job states whether it needs a GPU: this small one may run
on the CPU, so here it trains on the CPU and says so; a job that sets `REQUIRES_GPU = True`
stops at startup with the reason (a CPU-only build) and the remedy (install a CUDA build)
instead of training somewhere it was not meant to. The check trains a copy of the same
initial model on the CPU, written plainly, and compares the weights.

Run it with a CPU-only build of torch; with a CUDA build the broken mode has nothing to
show.
"""

import copy
import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
STEPS = 3

print(f"torch {torch.__version__}, built with CUDA: {torch.version.cuda}")

device = torch.device("cuda")  # the bug: hard-coded on the machine the script was written on
if FIXED:
    # --- fix: start
    # Choose the device once, from what this torch build and machine have, and say which.
    # A job too large for a CPU states it and refuses to start rather than crawl there.
    REQUIRES_GPU = False  # this small model trains in seconds on a CPU
    if torch.cuda.is_available():  # False on CPU-only builds, never raises
        device = torch.device("cuda")
    elif REQUIRES_GPU:
        sys.exit(f"this job needs a GPU, but torch {torch.__version__} was built without CUDA "
                 "(torch.version.cuda is None): install a CUDA build of torch")
    else:
        device = torch.device("cpu")
    print(f"training on {device}")
    # --- fix: end


def train(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """The job: a few SGD steps of a small classifier on a fixed batch."""
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        loss = torch.nn.functional.cross_entropy(model(inputs.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")
    return model


torch.manual_seed(0)
initial = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
inputs, targets = torch.randn(64, 16), torch.randint(0, 4, (64,))
model = train(copy.deepcopy(initial), device)

# --- check: start
reference = copy.deepcopy(initial)
optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
for _ in range(STEPS):  # the same steps, plainly on the CPU
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(reference(inputs), targets).backward()
    optimizer.step()
for trained, expected in zip(model.parameters(), reference.parameters()):
    torch.testing.assert_close(trained.detach().cpu(), expected.detach(), rtol=1e-4, atol=1e-5)
print(f"check: {STEPS} steps ran on {device} and the weights equal the same steps run on the CPU")
# --- check: end
