"""Reproducer for deepspeed-zero-resume-dp-world-size.

`python repro.py`: a ZeRO stage 2 run on two CPU ranks (gloo) trains three steps and
saves a checkpoint; each rank writes its own `zero_pp_rank_N_mp_rank_00_optim_states.pt`
with its partition of the fp32 weights and Adam state. The job is then resumed on one
rank. `engine.load_checkpoint` refuses to repartition the optimizer state:
`ZeRORuntimeException: The checkpoint being loaded used a DP world size of 2 but the
current world size is 1. ...`
`python repro.py --fixed`: before resuming, the checkpoint is converted to DeepSpeed's
universal format (`python -m deepspeed.checkpoint.ds_to_universal`), which stores each
parameter's fp32 weight and optimizer state whole, and the resumed engine loads it with
`"checkpoint": {"load_universal": true}`.
The check: the two-rank run also took a fourth step after saving; the one-rank run,
resumed from the checkpoint, takes the same step on the same eight samples and must end
with the same weights, which only holds if the Adam moments and step count came back.
"""

import os
import socket
import subprocess
import sys
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import torch
import torch.multiprocessing as mp

FIXED = "--fixed" in sys.argv[1:]
TAG = "global_step3"
SAVE_WORLD_SIZE = 2
RESUME_WORLD_SIZE = 1
SAMPLES_PER_STEP = 8  # train_batch_size: 4 per rank on 2 ranks, 8 on 1 rank


def config_for(world_size: int) -> dict:
    return {
        "train_batch_size": SAMPLES_PER_STEP,
        "train_micro_batch_size_per_gpu": SAMPLES_PER_STEP // world_size,
        "optimizer": {"type": "Adam", "params": {"lr": 1e-2, "torch_adam": True}},
        "zero_optimization": {"stage": 2},
        "steps_per_print": 1000,
    }


def prepare_resume(checkpoint_dir: str, tag: str, config: dict) -> tuple[str, dict]:
    return tag, config  # load the ZeRO checkpoint as the two ranks saved it


if FIXED:
    # --- fix: start
    def prepare_resume(checkpoint_dir: str, tag: str, config: dict) -> tuple[str, dict]:
        # Convert the per-rank ZeRO shards to the universal format (whole tensors per
        # parameter), which any data-parallel world size can load and repartition.
        universal = f"{tag}_universal"
        subprocess.run(
            [sys.executable, "-m", "deepspeed.checkpoint.ds_to_universal",
             "--input_folder", os.path.join(checkpoint_dir, tag),
             "--output_folder", os.path.join(checkpoint_dir, universal),
             "--num_extract_workers", "1", "--num_merge_workers", "1",
             "--inject_missing_state"],
            check=True,
        )
        return universal, {**config, "checkpoint": {"load_universal": True}}
    # --- fix: end


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(SAMPLES_PER_STEP, 8, generator=generator), torch.randn(SAMPLES_PER_STEP, 1, generator=generator)


def train_step(engine, step: int, rank: int, world_size: int) -> None:
    x, y = batch(step)
    share = SAMPLES_PER_STEP // world_size  # each rank trains on its slice of the step's samples
    x, y = x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]
    engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()


def worker(rank: int, world_size: int, port: int, workdir: str, phase: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size), LOCAL_SIZE=str(world_size),
    )
    import deepspeed

    deepspeed.init_distributed(dist_backend="gloo")
    model = build_model()
    checkpoint_dir = os.path.join(workdir, "checkpoints")
    config = config_for(world_size)
    if phase == "save":
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
        for step in range(3):
            train_step(engine, step, rank, world_size)
        engine.save_checkpoint(checkpoint_dir, tag=TAG)
        train_step(engine, 3, rank, world_size)  # the step the resumed run must reproduce
        if rank == 0:
            torch.save(engine.module.state_dict(), os.path.join(workdir, "after_step4_two_ranks.pt"))
    else:
        tag, config = prepare_resume(checkpoint_dir, TAG, config)
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
        engine.load_checkpoint(checkpoint_dir, tag=tag)
        print(f"resumed at global step {engine.global_steps} on {world_size} rank(s)")
        train_step(engine, 3, rank, world_size)
        torch.save(engine.module.state_dict(), os.path.join(workdir, "after_step4_resumed.pt"))
        torch.save(engine.global_steps, os.path.join(workdir, "resumed_steps.pt"))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="repro-zero-resume-") as workdir:
        mp.spawn(worker, args=(SAVE_WORLD_SIZE, free_port(), workdir, "save"), nprocs=SAVE_WORLD_SIZE)
        print("saved:", sorted(os.listdir(os.path.join(workdir, "checkpoints", TAG))))
        mp.spawn(worker, args=(RESUME_WORLD_SIZE, free_port(), workdir, "resume"), nprocs=RESUME_WORLD_SIZE)

        # --- check: start
        expected = torch.load(os.path.join(workdir, "after_step4_two_ranks.pt"), weights_only=True)
        resumed = torch.load(os.path.join(workdir, "after_step4_resumed.pt"), weights_only=True)
        assert torch.load(os.path.join(workdir, "resumed_steps.pt"), weights_only=True) == 4
        torch.testing.assert_close(resumed, expected)
        print("check: step 4 after resuming on 1 rank gives the weights the 2-rank run reached")
        # --- check: end
