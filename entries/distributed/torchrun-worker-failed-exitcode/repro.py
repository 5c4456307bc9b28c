"""Reproducer for torchrun-worker-failed-exitcode.

`python repro.py`: writes a 64 MiB training tensor with `torch.save`, then launches this
script as the worker with `python -m torch.distributed.run --nproc-per-node 2
--master-port <free port>` (two gloo ranks on 127.0.0.1). Every rank does
`torch.load(path)` and keeps the whole tensor in its own anonymous memory before taking
its half, so each rank grows by the full data set. A host would run out of RAM only with
a real data set, so a stand-in plays the kernel's OOM killer: a rank whose anonymous
resident memory grows past its 32 MiB share gets SIGKILL, which cannot be caught, so the
rank prints nothing. The elastic agent logs
`failed (exitcode: -9) local_rank: N (pid: N) of binary: ...` and raises `ChildFailedError`
whose root cause reads `Signal 9 (SIGKILL) received by PID N`.
`python repro.py --fixed`: `torch.load(path, mmap=True)` maps the file instead of copying
it; each rank only reads the rows of its own shard, those pages are file-backed page
cache the kernel can drop, and anonymous memory stays flat. Both ranks finish and
torchrun exits 0. The check compares both ranks' final weights with the same training
done in one process over the whole data set: mapping the file changes no value.

What this cannot show: the kernel's own choice of victim and its log line. On a real
host, confirm with `dmesg -T | grep -i "out of memory"` (or `journalctl -k`).
Everything torchrun started is killed before the script exits, also on its deadline.
"""

import contextlib
import datetime
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
ROWS, COLS = 16384, 1024  # float32: 64 MiB
RANK_SHARE = 32 * 1024 * 1024  # what each rank may grow by before the "host" runs out
DEADLINE = 100  # seconds for the torchrun launch
LR = 0.01


def anon_resident_bytes() -> int:
    """RssAnon: memory only swap or the OOM killer can take back (page cache is not in it)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no RssAnon in /proc/self/status")


def oom_killer_stand_in(baseline: int, rank: int) -> None:
    """Plays the kernel OOM killer: SIGKILL for a rank that outgrew its share of RAM."""
    grown = anon_resident_bytes() - baseline
    if grown > RANK_SHARE:
        print(
            f"[stand-in for the kernel OOM killer] rank {rank} (pid {os.getpid()}) grew by "
            f"{grown >> 20} MiB, over its {RANK_SHARE >> 20} MiB share: SIGKILL",
            flush=True,
        )
        os.kill(os.getpid(), signal.SIGKILL)


def load_dataset(path: str):
    import torch

    return torch.load(path)  # the bug: a private copy of the whole data set per rank


if FIXED:
    # --- fix: start
    def load_dataset(path: str):
        import torch

        # Map the file: pages are read on first touch and stay reclaimable page cache.
        return torch.load(path, mmap=True)
    # --- fix: end


def worker(path: str) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world_size = dist.get_rank(), dist.get_world_size()
    baseline = anon_resident_bytes()
    data = load_dataset(path)
    oom_killer_stand_in(baseline, rank)
    shard = data[rank::world_size]  # a view: no copy
    torch.manual_seed(0)
    model = torch.nn.Linear(COLS, 1)
    for start in range(0, len(shard), 1024):
        model.zero_grad()
        model(shard[start : start + 1024]).pow(2).mean().backward()
        with torch.no_grad():
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p -= LR * p.grad / world_size  # plain SGD on the averaged gradient
        oom_killer_stand_in(baseline, rank)
    print(f"[rank {rank}] trained on {len(shard)} rows, anonymous memory grew by "
          f"{(anon_resident_bytes() - baseline) >> 20} MiB", flush=True)
    torch.save(model.state_dict(), os.path.join(os.path.dirname(path), f"model-{rank}.pt"))
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


def launch(path: str) -> int:
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    command = [
        sys.executable, "-m", "torch.distributed.run",
        "--nproc-per-node", "2", "--master-port", str(free_port()),
        __file__, *sys.argv[1:], "--worker", path,
    ]
    torchrun = subprocess.Popen(command, env=env)
    try:
        return torchrun.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        print(f"torchrun still running after {DEADLINE} s: stopping it")
        return 1
    finally:
        if torchrun.poll() is None:
            for pid in [*descendants(torchrun.pid), torchrun.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            torchrun.wait()


def train_in_one_process(data, world_size: int) -> dict:
    """The reference: no torchrun, each step's gradient averaged over the ranks' batches."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(COLS, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    shards = [data[rank::world_size] for rank in range(world_size)]
    for start in range(0, len(shards[0]), 1024):
        model.zero_grad()
        for shard in shards:
            (model(shard[start : start + 1024]).pow(2).mean() / world_size).backward()
        optimizer.step()
    return model.state_dict()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[-1])
        sys.exit(0)
    import torch

    folder = tempfile.mkdtemp(prefix="repro-torchrun-oom-")
    path = os.path.join(folder, "train.pt")
    torch.save(torch.randn(ROWS, COLS), path)
    exit_code = launch(path)
    print(f"torchrun exited {exit_code}")

    # --- check: start
    assert exit_code == 0, exit_code
    expected = train_in_one_process(torch.load(path, mmap=True), world_size=2)
    for rank in range(2):
        trained = torch.load(os.path.join(folder, f"model-{rank}.pt"))
        torch.testing.assert_close(trained, expected)
    print("check: both ranks' weights equal one-process training on the whole data set")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
