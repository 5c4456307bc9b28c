"""Reproducer for torchrun-rendezvous-timeout.

`python repro.py`: a two-node torchrun job on one machine, both nodes started at once as a
job script starts them, each with `--nnodes 2 --nproc-per-node 1` but also with
`--standalone` (copied from a single-node recipe). `--standalone` makes every agent host
its own C10d store on a free local port, so each node waits in a rendezvous of its own for
a second node that never comes. With `--rdzv-conf join_timeout=10` (600 s by default)
each agent gives up and raises
`torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError` before starting a worker.
`python repro.py --fixed`: both nodes get the same `--rdzv-backend c10d --rdzv-endpoint
127.0.0.1:<port> --rdzv-id` instead; they meet, the two ranks all-reduce their rank
numbers plus one, and the check compares each rank's result with the sum computed here
without any process group.

Everything torchrun started is killed before the script exits, also on its deadline.
"""

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
DEADLINE = 60  # seconds for each torchrun launch
NNODES = 2


def worker(folder: str) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)
    print(f"[rank {rank}] world size {dist.get_world_size()}, all_reduce gave {value.item()}")
    torch.save(value, os.path.join(folder, f"sum-{rank}.pt"))
    dist.destroy_process_group()


def free_port() -> int:
    """A free port below Linux's ephemeral range, so no other socket takes it meanwhile."""
    for port in random.Random().sample(range(20000, 32000), 400):
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


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        for pid in [*descendants(process.pid), process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


def torchrun(node_rank: int, rendezvous: list[str], folder: str) -> subprocess.Popen:
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        str(NNODES),
        "--node-rank",
        str(node_rank),
        "--nproc-per-node",
        "1",
        *rendezvous,
        "--rdzv-conf",
        "join_timeout=10",
        "--max-restarts",
        "0",
        __file__,
        *sys.argv[1:],
        "--worker",
        folder,
    ]
    return subprocess.Popen(command, env=env)


def launch(folder: str) -> list[int]:
    rendezvous = ["--standalone"]  # every node hosts a rendezvous of its own
    if FIXED:
        # --- fix: start
        # one rendezvous for the whole job: the same backend, endpoint and id on every node
        endpoint = f"127.0.0.1:{free_port()}"
        rendezvous = ["--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint, "--rdzv-id", "job"]
        # --- fix: end
    nodes = [torchrun(rank, rendezvous, folder) for rank in range(NNODES)]
    codes = []
    try:
        for node in nodes:
            try:
                codes.append(node.wait(timeout=DEADLINE))
            except subprocess.TimeoutExpired:
                print(f"torchrun still running after {DEADLINE} s: stopping it")
                codes.append(1)
    finally:
        for node in nodes:
            stop(node)
    return codes


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[-1])
        sys.exit(0)
    import torch

    folder = tempfile.mkdtemp(prefix="repro-rdzv-timeout-")
    exit_codes = launch(folder)
    print(f"torchrun exit codes (node 0, node 1): {exit_codes}")

    # --- check: start
    assert exit_codes == [0] * NNODES, exit_codes
    expected = float(sum(rank + 1 for rank in range(NNODES)))  # computed here, no ranks
    for rank in range(NNODES):
        torch.testing.assert_close(
            torch.load(os.path.join(folder, f"sum-{rank}.pt")), torch.tensor([expected])
        )
    print("check: both nodes' ranks joined one job and all_reduce equals the sum of their values")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
