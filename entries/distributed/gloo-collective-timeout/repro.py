"""Reproducer for gloo-collective-timeout.

`python repro.py`: two gloo ranks on 127.0.0.1 train for a few steps, then rank 0 alone
evaluates and saves a checkpoint while rank 1 waits for it in `dist.barrier()`. The
collectives run on a process group whose timeout is 10 s (standing in for the 30-minute
default), and rank 0's work takes 16 s (standing in for an evaluation or a checkpoint
upload that takes longer than the timeout). Rank 1 gives up first:
`RuntimeError: [.../gloo/transport/tcp/unbound_buffer.cc:NN] Timed out waiting 10000ms
for recv operation to complete`. Rank 0 then finds its peer gone when it reaches the
barrier.
`python repro.py --fixed`: the wait for rank 0's rank-local work runs on a second process
group created with a timeout that covers that work (60 s); the training collectives keep
their short timeout, so a rank that really dies is still detected quickly. The check
confirms that both ranks finished and that each rank's weights equal the checkpoint rank 0
saved before the barrier (the ranks stayed in sync and rank 1 read a complete file).

The ranks are plain subprocesses of this script (no torchrun), so the waiting rank prints
its own error instead of being stopped by a launcher first. Every child is killed before
the script exits.
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
COLLECTIVE_TIMEOUT = datetime.timedelta(seconds=10)  # the training group's timeout
RANK0_ONLY_SECONDS = 16  # evaluation + checkpoint on rank 0, longer than the timeout
DEADLINE = 90  # seconds for the whole run


def rank0_evaluate_and_save() -> None:
    """Stands in for work only rank 0 does: evaluation, writing or uploading a checkpoint."""
    import torch

    end = time.monotonic() + RANK0_ONLY_SECONDS
    model = torch.nn.Linear(64, 64)
    while time.monotonic() < end:  # keep a core busy like real work would, in short slices
        with torch.no_grad():
            model(torch.randn(256, 64))
        time.sleep(0.05)


def worker(rank: int, folder: str) -> None:
    import torch
    import torch.distributed as dist

    # Rendezvous gets a generous timeout so a slow start on a loaded machine cannot fail it.
    dist.init_process_group(
        "gloo", rank=rank, world_size=WORLD_SIZE, timeout=datetime.timedelta(seconds=60)
    )
    train_group = dist.new_group(timeout=COLLECTIVE_TIMEOUT)
    wait_group = train_group  # the bug: waiting for rank 0 under the training timeout
    if FIXED:
        # --- fix: start
        # A separate group for waiting on rank 0's checkpoint/evaluation, with a timeout
        # that covers it. Every rank creates it, in the same order, right after init.
        wait_group = dist.new_group(timeout=datetime.timedelta(seconds=RANK0_ONLY_SECONDS * 4))
        # --- fix: end

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        model.zero_grad()
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(10 * step + rank))
        model(x).pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, group=train_group)
            p.grad /= WORLD_SIZE
        optimizer.step()
    print(f"[rank {rank}] 3 training steps done", flush=True)

    checkpoint = os.path.join(folder, "checkpoint.pt")
    if rank == 0:
        print(f"[rank 0] evaluating and saving a checkpoint ({RANK0_ONLY_SECONDS} s)", flush=True)
        rank0_evaluate_and_save()
        torch.save(model.state_dict(), checkpoint)
    else:
        print(f"[rank {rank}] waiting for rank 0 in dist.barrier()", flush=True)
    dist.barrier(group=wait_group)
    print(f"[rank {rank}] passed the barrier", flush=True)
    # Every rank goes on from the checkpoint rank 0 wrote before the barrier.
    torch.save(
        {"own": model.state_dict(), "checkpoint": torch.load(checkpoint)},
        os.path.join(folder, f"rank{rank}.pt"),
    )
    dist.destroy_process_group()


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
        GLOO_SOCKET_IFNAME="lo",  # gloo's own sockets on the loopback interface only
        OMP_NUM_THREADS="1",
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
    print(f"rank exit codes: {[codes.get(r, 'killed at deadline') for r in range(WORLD_SIZE)]}")
    return codes


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[-2]), sys.argv[-1])
        sys.exit(0)
    import torch

    folder = tempfile.mkdtemp()
    exit_codes = launch(folder)

    # --- check: start
    assert exit_codes == {0: 0, 1: 0}, exit_codes
    for rank in range(WORLD_SIZE):
        result = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        torch.testing.assert_close(result["checkpoint"], result["own"])
    print("check: both ranks finished, in sync with the checkpoint rank 0 saved")
    # --- check: end
