"""Reproducer for deepspeed-zero-to-fp32-shard-count.

`python repro.py`: an earlier ZeRO-2 run on two CPU ranks (gloo) saved its checkpoint in
`<output_dir>/global_step2`, one `zero_pp_rank_N_mp_rank_00_optim_states.pt` per rank.
The job is then rerun on one rank with the same output directory; after the same number
of steps it saves to the same `global_step2` folder, overwriting rank 0's file and
leaving the old run's rank-1 file next to it. Consolidating the weights with
DeepSpeed's `zero_to_fp32` (here `get_fp32_state_dict_from_zero_checkpoint`, what
`python zero_to_fp32.py` runs) reads a partition count of 1 from the first file but
finds 2 files: `ValueError: Expected 1 of '*_optim_states.pt' under '...' but found 2
files. Possibly due to an overwrite of an old checkpoint, ...`.
`python repro.py --fixed`: each run saves into an output directory of its own, so the
second run's folder holds only its own shard.
The check compares the consolidated fp32 state dict with the second run's weights at
the moment it saved.
"""

import os
import socket
import sys
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import torch
import torch.multiprocessing as mp

FIXED = "--fixed" in sys.argv[1:]
STEPS = 2


def output_dir_for(base: str, run: str) -> str:
    return os.path.join(base, "output")  # every run of the job writes to the same folder


if FIXED:
    # --- fix: start
    def output_dir_for(base: str, run: str) -> str:
        # One output directory per run: a rerun never mixes its shards with an older run's.
        return os.path.join(base, "output", run)
    # --- fix: end


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def worker(rank: int, world_size: int, port: int, base: str, run: str) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size), LOCAL_SIZE=str(world_size),
    )
    import deepspeed

    deepspeed.init_distributed(dist_backend="gloo")
    model = build_model()
    config = {
        "train_micro_batch_size_per_gpu": 4,
        "optimizer": {"type": "Adam", "params": {"lr": 1e-2, "torch_adam": True}},
        "zero_optimization": {"stage": 2},
        "steps_per_print": 1000,
    }
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    generator = torch.Generator().manual_seed(100 * world_size + rank)
    for _ in range(STEPS):
        x, y = torch.randn(4, 8, generator=generator), torch.randn(4, 1, generator=generator)
        engine.backward(torch.nn.functional.mse_loss(engine(x), y))
        engine.step()
    output_dir = output_dir_for(base, run)
    engine.save_checkpoint(output_dir)  # tag: global_step2
    if rank == 0:
        torch.save(engine.module.state_dict(), os.path.join(base, f"{run}-weights.pt"))
        with open(os.path.join(base, f"{run}-output-dir.txt"), "w") as handle:
            handle.write(output_dir)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="repro-zero-to-fp32-") as base:
        mp.spawn(worker, args=(2, free_port(), base, "run-1"), nprocs=2)  # the earlier run, 2 ranks
        mp.spawn(worker, args=(1, free_port(), base, "run-2"), nprocs=1)  # the rerun, 1 rank
        with open(os.path.join(base, "run-2-output-dir.txt")) as handle:
            checkpoint_dir = handle.read()
        print("shards:", sorted(f for f in os.listdir(os.path.join(checkpoint_dir, "global_step2")) if f.endswith("optim_states.pt")))

        from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

        consolidated = get_fp32_state_dict_from_zero_checkpoint(checkpoint_dir, tag="global_step2")

        # --- check: start
        saved = torch.load(os.path.join(base, "run-2-weights.pt"), weights_only=True)
        torch.testing.assert_close({name: consolidated[name] for name in saved}, saved)
        assert set(consolidated) == set(saved), sorted(consolidated)
        print("check: the consolidated fp32 weights equal the rerun's weights when it saved")
        # --- check: end
