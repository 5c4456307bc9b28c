"""Reproducer for torch-save-parent-directory-missing.

`python repro.py`: a small training loop runs three SGD-with-momentum steps and then
checkpoints model and optimizer state to the path configured for its run,
`runs/exp1/ckpt/step_3.pt`, relative to the working folder. Nothing ever created
`runs/exp1/ckpt`, so `torch.save` fails before writing a byte: torch 2.13's zip writer
(`PyTorchStreamWriter` in caffe2/serialize/inline_container.cc) raises `RuntimeError: Parent
directory runs/exp1/ckpt does not exist.`
`python repro.py --fixed`: the loop creates the checkpoint's folder
(`os.makedirs(os.path.dirname(path), exist_ok=True)`) right before saving. The check loads
the checkpoint back and asserts that every model and optimizer tensor equals the live state
(`torch.equal`), then resumes a fresh model and optimizer from the file and asserts that its
next step gives exactly the parameters of the run that went on without saving.

Everything runs in a temporary folder on the CPU; nothing is downloaded.
"""

import os
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]
RUN_NAME = "exp1"
CHECKPOINT = os.path.join("runs", RUN_NAME, "ckpt", "step_3.pt")  # as a run's config builds it


def make_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))


def make_optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, step: int) -> float:
    generator = torch.Generator().manual_seed(1000 + step)  # the batch depends on the step only
    x = torch.randn(8, 16, generator=generator)
    y = torch.randn(8, 4, generator=generator)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


with tempfile.TemporaryDirectory(prefix="repro-ckpt-dir-") as workdir:
    os.chdir(workdir)  # a fresh working folder: no `runs/` in it
    torch.manual_seed(0)
    model = make_model()
    optimizer = make_optimizer(model)
    for step in range(1, 4):
        loss = train_step(model, optimizer, step)
        print(f"step {step}: loss {loss:.4f}")

    state = {"step": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if FIXED:
        # --- fix: start
        # every process that saves creates the folder, before its first save
        os.makedirs(os.path.dirname(CHECKPOINT), exist_ok=True)
        # --- fix: end
    torch.save(state, CHECKPOINT)
    print(f"saved {CHECKPOINT} ({os.path.getsize(CHECKPOINT)} bytes)")

    # --- check: start
    restored = torch.load(CHECKPOINT)
    assert restored["step"] == 3
    live_model = model.state_dict()
    assert restored["model"].keys() == live_model.keys()
    for name, tensor in live_model.items():
        assert torch.equal(restored["model"][name], tensor), name
    live_optimizer = optimizer.state_dict()
    assert restored["optimizer"]["param_groups"] == live_optimizer["param_groups"]
    assert restored["optimizer"]["state"].keys() == live_optimizer["state"].keys()
    for index, buffers in live_optimizer["state"].items():
        for key, tensor in buffers.items():
            assert torch.equal(restored["optimizer"]["state"][index][key], tensor), (index, key)

    resumed_model = make_model()  # other initial weights, replaced by the checkpoint's
    resumed_optimizer = make_optimizer(resumed_model)
    resumed_model.load_state_dict(restored["model"])
    resumed_optimizer.load_state_dict(restored["optimizer"])
    train_step(resumed_model, resumed_optimizer, restored["step"] + 1)
    train_step(model, optimizer, 4)  # the run that went on without saving
    continued = model.state_dict()
    for name, tensor in resumed_model.state_dict().items():
        assert torch.equal(tensor, continued[name]), name
    print("check: the checkpoint holds every tensor; step 4 resumed from it equals the live run's")
    # --- check: end
