"""Reproducer for nccl-duplicate-gpu.

The job: column sums of a 64 x 1024 dataset, each rank summing the rows `rank`,
`rank + world size`, ... on its GPU and `all_reduce` adding the partial sums, as a data
parallel job adds its ranks' gradients.

`python repro.py`: a launcher in the style of torchrun starts the job's ranks as
subprocesses (`RANK`, `LOCAL_RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT` in the
environment). The launch script hard-codes two processes per node, and the training code
puts its tensors on `torch.device("cuda")`, the current device, without
`torch.cuda.set_device(local_rank)`: every rank works on `cuda:0`. The first
`all_reduce` creates the NCCL communicator; NCCL's init gathers every rank's host and PCI
bus id, finds two ranks on the same GPU and returns `ncclInvalidUsage`, which torch
raises as `torch.distributed.DistBackendError: NCCL error in: ..., invalid usage ...`
followed by `Last error:` and
`Duplicate GPU detected : rank 1 and rank 0 both on CUDA device <bus id>`. This happens
on a machine with one GPU (two ranks, one GPU) and on one with more (no rank left
`cuda:0`).
`python repro.py --fixed`: the launcher starts one rank per GPU this job can see
(`torch.cuda.device_count()`, what `torchrun --nproc-per-node=gpu` does) and every rank
selects its own GPU from `LOCAL_RANK` before any NCCL call. On a one-GPU machine the
same job runs with world size 1, its one rank taking every row. The check reads what
every rank reports: as many ranks as GPUs, each on the GPU of its `LOCAL_RANK`, every row
of the dataset summed by exactly one rank, and every rank's all-reduced result equal to
the column sums of the whole dataset computed on the CPU without sharding. Fewer ranks
than the launch script meant is only a fix if no row is lost, and that holds on one GPU
as on eight.

Needs a CUDA GPU (one is enough) and a torch build with NCCL. Every child is killed
before the script exits, also on the deadline.
"""

import datetime
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

import torch

FIXED = "--fixed" in sys.argv[1:]
ROWS, N = 64, 1024  # the dataset; N elements per rank go through the all-reduce
DEADLINE = 120  # seconds for the whole job

NPROC_PER_NODE = 2  # the bug, part 1: written for a two-GPU node


def rank_device(local_rank: int) -> torch.device:
    # The bug, part 2: the current device, which is cuda:0 in every process.
    return torch.device("cuda")


if FIXED:
    # --- fix: start
    # One rank per GPU this job can see, and each rank on its own GPU.
    NPROC_PER_NODE = torch.cuda.device_count()

    def rank_device(local_rank: int) -> torch.device:
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    # --- fix: end


def dataset() -> torch.Tensor:
    # Whole numbers in float64: every sum below is exact, in any order.
    return torch.arange(ROWS * N, dtype=torch.float64).reshape(ROWS, N)


def worker(folder: str) -> None:
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    device = rank_device(local_rank)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60))
    rows = list(range(rank, ROWS, world_size))  # this rank's shard of the dataset
    x = dataset()[rows].to(device).sum(dim=0)
    dist.all_reduce(x)  # creates the NCCL communicator on x's device
    torch.cuda.synchronize(device)
    report = {
        "rank": rank,
        "local_rank": local_rank,
        "world_size": world_size,
        "device": x.device.index,
        "rows": rows,
    }
    print(f"[rank {rank}] all_reduce of {len(rows)} rows on cuda:{report['device']}", flush=True)
    torch.save(x.cpu(), os.path.join(folder, f"rank{rank}.pt"))
    with open(os.path.join(folder, f"rank{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


def free_port() -> int:
    # A free port below Linux's ephemeral range, so no other socket takes it meanwhile.
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def launch(folder: str) -> dict:
    """Start NPROC_PER_NODE ranks, wait for all of them, return their exit codes."""
    print(f"{torch.cuda.device_count()} GPU(s) visible, starting {NPROC_PER_NODE} rank(s)", flush=True)
    base = dict(
        os.environ,
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(free_port()),
        WORLD_SIZE=str(NPROC_PER_NODE),
        NCCL_SOCKET_IFNAME="lo",  # one machine: NCCL's bootstrap on the loopback
    )
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, *sys.argv[1:], "--worker", folder],
            env={**base, "RANK": str(rank), "LOCAL_RANK": str(rank)},
            start_new_session=True,
        )
        for rank in range(NPROC_PER_NODE)
    ]
    codes = {}
    try:
        end = time.monotonic() + DEADLINE
        while len(codes) < len(procs) and time.monotonic() < end:
            for rank, proc in enumerate(procs):
                if rank not in codes and proc.poll() is not None:
                    codes[rank] = proc.returncode
            time.sleep(0.2)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    print(f"rank exit codes: {[codes.get(r, 'killed at deadline') for r in range(len(procs))]}", flush=True)
    return codes


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker(sys.argv[-1])
        sys.exit(0)
    if not torch.cuda.is_available():
        sys.exit("this reproducer needs a CUDA GPU")
    folder = tempfile.mkdtemp()
    exit_codes = launch(folder)

    # --- check: start
    gpus = torch.cuda.device_count()
    assert gpus == NPROC_PER_NODE, f"{NPROC_PER_NODE} ranks for {gpus} GPU(s)"
    assert exit_codes == {rank: 0 for rank in range(gpus)}, exit_codes
    reports, results = [], []
    for rank in range(gpus):
        with open(os.path.join(folder, f"rank{rank}.json")) as f:
            reports.append(json.load(f))
        results.append(torch.load(os.path.join(folder, f"rank{rank}.pt")))
    for report in reports:
        assert report["world_size"] == gpus, report
        assert report["device"] == report["local_rank"] == report["rank"], report
    assert len({report["device"] for report in reports}) == gpus, reports
    summed_rows = sorted(row for report in reports for row in report["rows"])
    assert summed_rows == list(range(ROWS)), f"rows summed: {summed_rows}"
    expected = dataset().sum(dim=0)  # the whole dataset on the CPU, no sharding
    for rank, result in enumerate(results):
        assert torch.equal(result, expected), (rank, (result - expected).abs().max().item())
    print(f"check: {gpus} rank(s), one per GPU; all {ROWS} rows summed once; every rank's result equals the CPU sums")
    # --- check: end
