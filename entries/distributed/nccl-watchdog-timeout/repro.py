"""Reproducer for nccl-watchdog-timeout (needs 2 CUDA GPUs).

`python repro.py`: two NCCL ranks (one GPU each, launched as plain subprocesses, as a
SLURM or MPI launcher would) train for a few steps, then rank 0 alone evaluates and
saves a checkpoint while rank 1 already waits in the next `all_reduce`. The training
collectives run on a process group whose timeout is 10 s (standing in for the 10-minute
NCCL default), and rank 0's work takes 20 s (standing in for an evaluation or checkpoint
upload that outlasts the timeout). Rank 1's NCCL watchdog thread finds the all-reduce
still unfinished after 10 s and logs
`Watchdog caught collective operation timeout: WorkNCCL(SeqNum=N, OpType=ALLREDUCE, ...)
ran for N milliseconds before timing out.`, then takes the process down (SIGABRT).
`python repro.py --fixed`: the all-reduce that waits for rank 0's rank-local work runs on a
second NCCL group created with a timeout that covers that work (80 s); the training
collectives keep the short timeout, so a rank that really hangs is still caught. The check
confirms that both ranks finished, counted both ranks in the wait, and that their
all-reduced gradient equals the sum of both ranks' gradients computed on the CPU.

Every child is killed before the script exits, also on the deadline.
"""

import datetime
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
STEPS = 3
COLLECTIVE_TIMEOUT = datetime.timedelta(seconds=10)  # the training group's timeout
RANK0_ONLY_SECONDS = 20  # evaluation + checkpoint on rank 0, longer than the timeout
DEADLINE = 100  # seconds for the whole run


def worker(rank: int, folder: str) -> None:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    # Rendezvous gets a generous timeout so a slow start cannot fail it.
    dist.init_process_group(
        "nccl", rank=rank, world_size=WORLD_SIZE, timeout=datetime.timedelta(seconds=60)
    )
    train_group = dist.new_group(timeout=COLLECTIVE_TIMEOUT)
    wait_group = train_group  # the bug: waiting for rank 0 under the training timeout
    if FIXED:
        # --- fix: start
        # A separate group for waiting on rank 0's checkpoint/evaluation, with a timeout
        # that covers it. Every rank creates it, in the same order, right after init.
        wait_group = dist.new_group(timeout=datetime.timedelta(seconds=RANK0_ONLY_SECONDS * 4))
        # --- fix: end
    # Create the NCCL communicators now, with every rank present (NCCL connects lazily,
    # on a group's first collective).
    for group in [train_group] if wait_group is train_group else [train_group, wait_group]:
        dist.all_reduce(torch.ones(1, device=device), group=group)
    torch.cuda.synchronize()

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1).to(device)
    for step in range(STEPS):
        model.zero_grad()
        model(batch(step, rank).to(device)).pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, group=train_group)
    torch.cuda.synchronize()
    print(f"[rank {rank}] {STEPS} training steps done", flush=True)

    if rank == 0:
        print(f"[rank 0] evaluating and saving a checkpoint ({RANK0_ONLY_SECONDS} s)", flush=True)
        time.sleep(RANK0_ONLY_SECONDS)  # stands in for evaluation, torch.save, an upload
    else:
        print(f"[rank {rank}] waiting for rank 0 in all_reduce", flush=True)
    ready = torch.ones(1, device=device)
    dist.all_reduce(ready, group=wait_group)
    print(f"[rank {rank}] all ranks ready: {ready.item():.0f}", flush=True)  # blocks on the GPU
    result = {"ranks_ready": int(ready.item()), "grad": model.weight.grad.cpu()}
    torch.save(result, os.path.join(folder, f"rank{rank}.pt"))
    dist.destroy_process_group()


def batch(step: int, rank: int):
    """Rank `rank`'s input at `step`, made on the CPU so a reference can recompute it."""
    import torch

    return torch.randn(8, 16, generator=torch.Generator().manual_seed(10 * step + rank))


def summed_gradient():
    """The reference, on the CPU: the last step's gradient summed over both ranks' batches."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    for rank in range(WORLD_SIZE):
        model(batch(STEPS - 1, rank)).pow(2).mean().backward()
    return model.weight.grad


def free_port() -> int:
    # A free port below Linux's ephemeral range (32768-60999): no socket bound to port 0
    # in the meantime (gloo opens many) can take it before rank 0 listens on it.
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def launch(folder: str) -> dict:
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, *sys.argv[1:], "--worker", str(rank), folder],
            env=env,
            start_new_session=True,
        )
        for rank in range(WORLD_SIZE)
    ]
    codes = {}
    try:
        end = time.monotonic() + DEADLINE
        while len(codes) < WORLD_SIZE and time.monotonic() < end:
            for rank, proc in enumerate(procs):
                if rank not in codes and proc.poll() is not None:
                    codes[rank] = proc.returncode
            time.sleep(0.2)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    described = {
        r: (signal.Signals(-c).name if isinstance(c, int) and c < 0 else c)
        for r, c in codes.items()
    }
    print(f"rank exit codes: {[described.get(r, 'killed at deadline') for r in range(WORLD_SIZE)]}")
    return codes


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[-2]), sys.argv[-1])
        sys.exit(0)
    import torch

    if torch.cuda.device_count() < WORLD_SIZE:
        sys.exit(f"needs {WORLD_SIZE} CUDA GPUs, found {torch.cuda.device_count()}")
    folder = tempfile.mkdtemp()
    exit_codes = launch(folder)

    # --- check: start
    assert exit_codes == {0: 0, 1: 0}, exit_codes
    expected = summed_gradient()
    for rank in range(WORLD_SIZE):
        result = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        assert result["ranks_ready"] == WORLD_SIZE, result["ranks_ready"]
        torch.testing.assert_close(result["grad"], expected, rtol=1e-4, atol=1e-6)
    print("check: both ranks finished; their all-reduced gradient equals the CPU reference")
    # --- check: end
