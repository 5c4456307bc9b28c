"""Reproducer for mp-spawn-process-raised.

`python repro.py`: `torch.multiprocessing.spawn` starts two gloo ranks on 127.0.0.1.
Each rank takes `len(data) // world_size` rows starting at `rank * per_rank + rank`,
an off-by-one that shifts every rank after the first by one row more: rank 0 gets rows
0-3, rank 1 starts at row 5 and gets only 3 rows, and the `view(2, 2, 4)` that splits
its rows into two micro-batches raises `RuntimeError: shape
'[2, 2, 4]' is invalid for input of size 12`. `spawn` sees rank 1 exit with an error
and raises `torch.multiprocessing.spawn.ProcessRaisedException` in the parent, with
`-- Process 1 terminated with the following error:` and rank 1's traceback.
`python repro.py --fixed`: each slice starts at `rank * per_rank`; both ranks take 4
rows, all-reduce their sums, and the parent checks the result against the sum of the
whole data set computed in one process.
"""

import datetime
import os
import random
import shutil
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
DATA = torch.arange(32, dtype=torch.float32).view(8, 4)


def shard_start(rank: int, per_rank: int) -> int:
    return rank * per_rank + rank  # off by one per rank: rank 1 skips a row and runs short


if FIXED:
    # --- fix: start
    def shard_start(rank: int, per_rank: int) -> int:
        """Each rank's slice starts where the previous one ends: equal shards, every row once."""
        return rank * per_rank

    # --- fix: end


def worker(rank: int, port: int, folder: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group(
        "gloo", rank=rank, world_size=WORLD_SIZE, timeout=datetime.timedelta(seconds=30)
    )
    per_rank = len(DATA) // WORLD_SIZE
    start = shard_start(rank, per_rank)
    rows = DATA[start : start + per_rank]
    micro_batches = rows.reshape(-1).view(2, 2, 4)  # two micro-batches of two rows
    total = micro_batches.sum(dim=(0, 1))
    dist.all_reduce(total)
    torch.save(total, os.path.join(folder, f"total-{rank}.pt"))
    dist.destroy_process_group()


def free_port() -> int:
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


if __name__ == "__main__":
    folder = tempfile.mkdtemp(prefix="repro-mp-spawn-")
    mp.spawn(worker, args=(free_port(), folder), nprocs=WORLD_SIZE, join=True)

    # --- check: start
    reference = DATA.sum(dim=0)  # the whole data set, one process, no ranks
    for rank in range(WORLD_SIZE):
        torch.testing.assert_close(torch.load(os.path.join(folder, f"total-{rank}.pt")), reference)
    print("check: every rank's all-reduced column sums equal the whole data set's")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
