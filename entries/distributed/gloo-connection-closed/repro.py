"""Reproducer for gloo-connection-closed.

`python repro.py`: two gloo ranks on 127.0.0.1 train on 22 samples with a per-rank batch
of 4. The shards are uneven (rank 0 gets 12 samples, rank 1 the remaining 10), so rank
1's third batch has 2 samples. The model code flattens with the hard-coded batch size,
`x.view(BATCH, -1)`, which turns the short batch into the wrong shape, and the linear
layer raises `mat1 and mat2 shapes cannot be multiplied` on rank 1 only. Rank 1's process
exits; rank 0, already inside `all_reduce` for the same step, reads end-of-file on its
socket to rank 1 and raises
`RuntimeError: [.../gloo/transport/tcp/pair.cc:NNN] Connection closed by peer [127.0.0.1]:PORT`.
`python repro.py --fixed`: the flatten uses the batch's own size, `x.view(x.size(0), -1)`,
so the short last batch works; rank 1 no longer crashes and both ranks finish. The check
counts the samples the ranks trained on: all 22, each once, the short batch included.

The ranks are plain subprocesses of this script (no torchrun), so the surviving rank
prints its own error instead of being stopped by a launcher first. Every child is killed
before the script exits.
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
BATCH = 4
SAMPLES = 22  # not a multiple of WORLD_SIZE * BATCH
DEADLINE = 90  # seconds for the whole run


def shard(rank: int) -> range:
    """Contiguous shards of whole batches; the last rank takes the remainder (12 + 10)."""
    per_rank = -(-SAMPLES // (WORLD_SIZE * BATCH)) * BATCH
    start = rank * per_rank
    stop = SAMPLES if rank == WORLD_SIZE - 1 else start + per_rank
    return range(start, stop)


def flatten(x):
    return x.view(BATCH, -1)  # the bug: assumes every batch is full


if FIXED:
    # --- fix: start
    def flatten(x):
        return x.view(x.size(0), -1)  # the batch's own size: a short last batch works
    # --- fix: end


def worker(rank: int, folder: str) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", rank=rank, world_size=WORLD_SIZE, timeout=datetime.timedelta(seconds=60)
    )
    torch.manual_seed(0)
    images = torch.randn(SAMPLES, 2, 4, 4)
    model = torch.nn.Linear(32, 1)
    indices = list(shard(rank))
    # Both ranks run 3 steps; rank 1's third batch is short (2 samples).
    steps = -(-len(indices) // BATCH)
    trained_on = []
    for step in range(steps):
        batch = images[indices[step * BATCH : (step + 1) * BATCH]]
        if rank == 0:
            time.sleep(0.5)  # rank 0 is a little slower, so it is already waiting
        model.zero_grad()
        model(flatten(batch)).pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        trained_on += indices[step * BATCH : (step + 1) * BATCH]
        print(f"[rank {rank}] step {step} done ({len(batch)} samples)", flush=True)
    with open(os.path.join(folder, f"rank{rank}.txt"), "w") as f:
        f.write(" ".join(map(str, trained_on)))
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
    folder = tempfile.mkdtemp()
    exit_codes = launch(folder)

    # --- check: start
    assert exit_codes == {0: 0, 1: 0}, exit_codes
    trained_on = []
    for rank in range(WORLD_SIZE):
        with open(os.path.join(folder, f"rank{rank}.txt")) as f:
            trained_on += [int(i) for i in f.read().split()]
    assert sorted(trained_on) == list(range(SAMPLES)), sorted(trained_on)
    print(f"check: the two ranks trained on all {SAMPLES} samples, each once")
    # --- check: end
