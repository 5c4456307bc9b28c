"""Reproducer for torch-distributed-launch-deprecated.

`python repro.py`: launches this script as a two-rank data-parallel training job (gloo,
CPU, 127.0.0.1) with `python -m torch.distributed.launch --nproc-per-node 2`, the way
older READMEs and `dist_train.sh` scripts do. The launcher prints `FutureWarning: The
module torch.distributed.launch is deprecated and will be removed in future. Use
torchrun.` and passes each worker its local rank as a `--local-rank=<n>` argument, which
the training script parses.
`python repro.py --fixed`: the job is started with torchrun (`python -m
torch.distributed.run`, the module behind the `torchrun` command), which passes no
argument and sets `LOCAL_RANK` in each worker's environment; the script reads its local
rank from there. The check compares the trained weights of both ranks with the same
training run in one process on the whole batch (each rank trains on the half its local
rank selects, and DDP averages the gradients), so a rank that got the wrong local rank
would fail it.

Everything the launcher started is killed before the script exits, also on its deadline.
"""

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
DEADLINE = 100  # seconds for the launch
WORLD_SIZE = 2
STEPS = 4


def launcher_module() -> str:
    return "torch.distributed.launch"  # the deprecated launcher


def local_rank(argv: list[str]) -> int:
    """The local rank as torch.distributed.launch passes it: a command-line argument."""
    parser = argparse.ArgumentParser(prog="train.py")
    parser.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=0)
    return parser.parse_known_args(argv)[0].local_rank


if FIXED:
    # --- fix: start
    def launcher_module() -> str:
        return "torch.distributed.run"  # what the `torchrun` command runs

    def local_rank(argv: list[str]) -> int:
        """torchrun passes no argument: the local rank is in the environment."""
        return int(os.environ["LOCAL_RANK"])
    # --- fix: end


def data():
    import torch

    g = torch.Generator().manual_seed(1)
    return torch.randn(STEPS, 8, 5, generator=g), torch.randn(STEPS, 8, 2, generator=g)


def build_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 2))


def worker(argv: list[str], folder: str) -> None:
    """The training script: each rank trains on the half of every batch its local rank picks."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank_here = local_rank(argv)
    dist.init_process_group("gloo")
    model = build_model()
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.3)
    xs, ys = data()
    half = xs.shape[1] // WORLD_SIZE
    for step in range(STEPS):
        part = slice(rank_here * half, (rank_here + 1) * half)
        loss = torch.nn.functional.mse_loss(ddp_model(xs[step, part]), ys[step, part])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), os.path.join(folder, f"rank{dist.get_rank()}.pt"))
    print(f"[rank {dist.get_rank()}] local rank {rank_here}: done", flush=True)
    dist.destroy_process_group()


def free_port() -> int:
    """A free port below Linux's ephemeral range, so no other socket takes it meanwhile."""
    for port in random.Random().sample(range(20000, 32000), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (the launcher starts each worker in a session of its own)."""
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
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1")
    command = [
        sys.executable, "-m", launcher_module(),
        "--nproc-per-node", str(WORLD_SIZE), "--master-port", str(free_port()),
        __file__, "--worker", folder, "--", *sys.argv[1:],
    ]
    launcher = subprocess.Popen(command, env=env)
    try:
        return launcher.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        print(f"launcher still running after {DEADLINE} s: stopping it")
        return 1
    finally:
        if launcher.poll() is None:
            for pid in [*descendants(launcher.pid), launcher.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            launcher.wait()


if __name__ == "__main__":
    if "--worker" in sys.argv:
        at = sys.argv.index("--worker")
        worker(sys.argv[1:at] + sys.argv[at + 2:], sys.argv[at + 1])
        sys.exit(0)
    folder = tempfile.mkdtemp(prefix="repro-launch-")
    exit_code = launch(folder)
    print(f"launcher exited {exit_code}")

    # --- check: start
    import torch

    assert exit_code == 0, exit_code
    # reference: one process, the whole batch, no DDP
    reference = build_model()
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.3)
    xs, ys = data()
    for step in range(STEPS):
        loss = torch.nn.functional.mse_loss(reference(xs[step]), ys[step])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for rank in range(WORLD_SIZE):
        saved = torch.load(os.path.join(folder, f"rank{rank}.pt"))
        for name, value in reference.state_dict().items():
            torch.testing.assert_close(saved[name], value, msg=f"rank {rank}: {name}")
    print("check: both ranks' weights equal one-process full-batch training")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
