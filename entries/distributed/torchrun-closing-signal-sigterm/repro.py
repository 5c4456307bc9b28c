"""Reproducer for torchrun-closing-signal-sigterm.

`python repro.py`: `torchrun --standalone --nproc-per-node 2` runs a data-parallel sum
over gloo. The 7 samples (2 features each) are cut into shards of `ceil(7 / 2) = 4`
samples with a reshape that assumes every shard is full; rank 1's shard has only 3, so
its `view` raises `RuntimeError: shape '[4, 2]' is invalid for input of size 6` before
it joins the process group. Rank 0 is meanwhile waiting for it in `init_process_group`.
The agent sees rank 1 exit with code 1 and logs `Sending process <pid> closing signal
SIGTERM` for rank 0, then `failed (exitcode: 1) local_rank: 1` and the
`ChildFailedError` summary, in which rank 0 shows `exitcode: -15` (SIGTERM).
`python repro.py --fixed`: the shards are cut with `tensor_split`, which lets the last one
be shorter; both ranks sum their shards and all-reduce, and the check compares each
rank's result with the column sums of all 7 samples computed here, without any process
group.

Everything torchrun started is killed before the script exits, also on its deadline.
"""

import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
DEADLINE = 90  # seconds for the torchrun launch
NPROC = 2
SAMPLES, FEATURES = 7, 2


def take_shard(data, rank: int, world: int):
    """Rank `rank`'s samples: a reshape that assumes every shard holds the same count."""
    per_rank = math.ceil(SAMPLES / world)
    flat = data.flatten()[rank * per_rank * FEATURES : (rank + 1) * per_rank * FEATURES]
    return flat.view(per_rank, FEATURES)


if FIXED:
    # --- fix: start
    def take_shard(data, rank: int, world: int):
        """Rank `rank`'s samples; the last shard may hold fewer of them."""
        return data.tensor_split(world)[rank]

    # --- fix: end


def dataset():
    import torch

    return torch.arange(SAMPLES * FEATURES, dtype=torch.float64).view(SAMPLES, FEATURES)


def worker(folder: str) -> None:
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    shard = take_shard(dataset(), rank, world)  # each rank reads its shard first
    dist.init_process_group("gloo")
    total = shard.sum(dim=0)
    dist.all_reduce(total)
    print(f"[rank {rank}] {shard.shape[0]} samples, all-reduced sums {total.tolist()}")
    torch.save(total, os.path.join(folder, f"sum-{rank}.pt"))
    dist.destroy_process_group()


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (torchrun starts each worker in a session of its own)."""
    parent_of = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent_of[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parent_of.items() if pp == parent]
        found += children
        frontier += children
    return found


def launch(folder: str) -> int:
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(NPROC),
        "--max-restarts",
        "0",
        __file__,
        *sys.argv[1:],
        "--worker",
        folder,
    ]
    process = subprocess.Popen(command, env=env)
    try:
        return process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        print(f"torchrun still running after {DEADLINE} s: stopping it")
        return 1
    finally:
        if process.poll() is None:
            for pid in [*descendants(process.pid), process.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            process.wait()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[-1])
        sys.exit(0)
    import torch

    folder = tempfile.mkdtemp(prefix="repro-closing-signal-")
    exit_code = launch(folder)
    print(f"torchrun exit code: {exit_code}")

    # --- check: start
    assert exit_code == 0, exit_code
    expected = dataset().sum(dim=0)  # every sample's features summed here, no ranks
    for rank in range(NPROC):
        torch.testing.assert_close(torch.load(os.path.join(folder, f"sum-{rank}.pt")), expected)
    print(f"check: both ranks' all-reduced sums equal the sums over all {SAMPLES} samples")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
