"""Reproducer for nccl-taking-process-down (needs 2 CUDA GPUs).

`python repro.py`: two NCCL ranks (one GPU each, launched as plain subprocesses, as a
SLURM or MPI launcher would) follow the "main process first" pattern: rank 0 builds the
tokenized data set cache while every other rank waits for it in `dist.barrier()`. The
NCCL group's timeout is 10 s (standing in for the 10-minute default) and rank 0's
preprocessing takes 20 s (standing in for a tokenization that outlasts it). Rank 1's
watchdog thread times the barrier out and then logs
`Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA
kernels, subsequent GPU operations might run on corrupted/incomplete data.` and
`To avoid data inconsistency, we are taking the entire process down.`, and the process
dies with SIGABRT (exit code -6 under torchrun).
`python repro.py --fixed`: the ranks wait for rank 0 on a CPU (gloo) process group created
with a timeout that covers the preprocessing (80 s). Nothing is queued on the GPU while
they wait, so the NCCL watchdog has nothing to time out; the NCCL group keeps its short
timeout for the training collectives. The check confirms that both ranks finished and that
their all-reduced gradient equals the sum of both ranks' gradients computed on the CPU.

Every child is killed before the script exits, also on the deadline.
"""

import datetime
import functools
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
NCCL_TIMEOUT = datetime.timedelta(seconds=10)  # the NCCL group's timeout
PREPROCESS_SECONDS = 20  # rank 0's data set preprocessing, longer than the timeout
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
    nccl_group = dist.new_group(timeout=NCCL_TIMEOUT)
    # Create the NCCL communicator now, with every rank present (NCCL connects lazily,
    # on a group's first collective); DDP's parameter broadcast does the same.
    dist.all_reduce(torch.ones(1, device=device), group=nccl_group)
    torch.cuda.synchronize()

    wait_for_rank0 = functools.partial(
        dist.barrier, group=nccl_group, device_ids=[rank]
    )  # the bug: waiting for rank 0 on the NCCL group, under its 10 s timeout
    if FIXED:
        # --- fix: start
        # Wait for rank 0 on the CPU: a gloo group whose timeout covers the preprocessing.
        # Every rank creates it here, in the same order, while all ranks are present.
        cpu_group = dist.new_group(
            backend="gloo", timeout=datetime.timedelta(seconds=PREPROCESS_SECONDS * 4)
        )
        wait_for_rank0 = functools.partial(dist.barrier, group=cpu_group)
        # --- fix: end

    if rank == 0:
        print(f"[rank 0] tokenizing the data set ({PREPROCESS_SECONDS} s)", flush=True)
        time.sleep(PREPROCESS_SECONDS)  # stands in for datasets.map(...) writing a cache
        wait_for_rank0()
    else:
        print(f"[rank {rank}] waiting for rank 0 to build the cache", flush=True)
        wait_for_rank0()
    print(f"[rank {rank}] loading the cached data set", flush=True)

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1).to(device)
    for step in range(STEPS):
        model.zero_grad()
        model(batch(step, rank).to(device)).pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, group=nccl_group)
    ready = torch.ones(1, device=device)
    dist.all_reduce(ready, group=nccl_group)
    print(f"[rank {rank}] {STEPS} training steps done, {ready.item():.0f} ranks", flush=True)
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
    env = dict(
        os.environ,
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(free_port()),
        GLOO_SOCKET_IFNAME="lo",  # the fixed version's gloo group: loopback only
    )
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
