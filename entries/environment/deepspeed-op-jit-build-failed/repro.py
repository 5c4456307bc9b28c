"""Reproducer for deepspeed-op-jit-build-failed.

`python repro.py`: DeepSpeed's CPU Adam (`DeepSpeedCPUAdam`, the optimizer of ZeRO-Offload)
needs its C++ op `cpu_adam`, which the PyPI wheel does not ship pre-built, so DeepSpeed
JIT-builds it with torch's ninja builder on first use. The job runs with a PATH on which no
`ninja` executable can be found, as when a virtual environment's python is started without
activating the environment (its bin folder, where `pip install ninja` put the executable,
is not on PATH: cron, Slurm and notebook kernels). torch's `verify_ninja_availability`
fails and DeepSpeed raises `RuntimeError: Unable to JIT load the cpu_adam op due to ninja
not being installed.`
`python repro.py --fixed`: the folder of the ninja that pip installed is put on PATH; torch
writes a `build.ninja` and compiles the op with the machine's C++ compiler (a few minutes on
two cores) into a build folder inside the run's temporary folder, so every run builds it
afresh and nothing is cached outside the run.
The check: five training steps of a small model with DeepSpeedCPUAdam, now running the
compiled op, give the same weights as five steps of `torch.optim.AdamW` (the same update:
DeepSpeedCPUAdam is AdamW by default) from the same weights on the same batches.
"""

import os
import sys
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator: no GPU needed

import ninja
import torch

FIXED = "--fixed" in sys.argv[1:]
STEPS = 5
HYPERPARAMETERS = {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}


def path_without_ninja(scratch: str) -> str:
    """PATH as a job sees it when no `ninja` is on it.

    Each folder on PATH that holds a `ninja` is replaced by a folder of links to everything
    else it holds, so the compiler, assembler and linker a build needs stay reachable.
    """
    folders = []
    for index, folder in enumerate(os.environ.get("PATH", os.defpath).split(os.pathsep)):
        if not os.path.isfile(os.path.join(folder, "ninja")):
            folders.append(folder)
            continue
        copy = os.path.join(scratch, f"path-{index}")
        os.mkdir(copy)
        for name in os.listdir(folder):
            if name != "ninja":
                os.symlink(os.path.join(folder, name), os.path.join(copy, name))
        folders.append(copy)
    return os.pathsep.join(folders)


def build_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))


def train(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    """Train on the same batches whatever the optimizer; return the final weights."""
    generator = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        x, y = torch.randn(8, 16, generator=generator), torch.randn(8, 4, generator=generator)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return {name: value.detach().clone() for name, value in model.state_dict().items()}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="repro-ds-jit-") as scratch:
        os.environ["PATH"] = path_without_ninja(scratch)
        # The op is compiled here, inside this run's temporary folder, never reused by another run.
        os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(scratch, "torch_extensions")
        if FIXED:
            # --- fix: start
            # Put the folder of pip's ninja (the environment's bin folder) on PATH, as
            # activating the environment does; torch's builder runs `ninja` from PATH.
            os.environ["PATH"] = ninja.BIN_DIR + os.pathsep + os.environ["PATH"]
            # --- fix: end

        from deepspeed.ops.adam import DeepSpeedCPUAdam

        model = build_model()
        offloaded = train(model, DeepSpeedCPUAdam(model.parameters(), **HYPERPARAMETERS))
        print(f"DeepSpeedCPUAdam trained {STEPS} steps with the cpu_adam op built in {scratch}")

        # --- check: start
        reference_model = build_model()
        torch_adamw = torch.optim.AdamW(reference_model.parameters(), **HYPERPARAMETERS)
        reference = train(reference_model, torch_adamw)
        initial = build_model().state_dict()
        assert offloaded.keys() == reference.keys()
        assert any(not torch.equal(reference[k], initial[k]) for k in initial), "no weight moved"
        torch.testing.assert_close(offloaded, reference)
        print(f"check: {STEPS} DeepSpeedCPUAdam steps give the weights torch.optim.AdamW reaches")
        # --- check: end
