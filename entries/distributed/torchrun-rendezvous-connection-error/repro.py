"""Reproducer for torchrun-rendezvous-connection-error.

`python repro.py`: a two-node torchrun job on one machine (127.0.0.1). Node 0 runs
`torchrun --nnodes 2 --node-rank 0 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:<A>`
and hosts the C10d store on port A. Node 1 is started with the endpoint of another port
B, where nothing listens (a stale port in a job script, as a wrong master address is),
and with `--rdzv-conf is_host=false,read_timeout=5` as a second machine has (it never
hosts the store). Its agent cannot reach a store and raises
`torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to
the C10d store has failed. See inner exception for details.`; node 0 is then stopped.
`python repro.py --fixed`: node 1 is given the endpoint node 0 hosts; both agents meet,
the two ranks all-reduce their rank numbers plus one, and the check compares the result
with the sum computed here.

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
    print(f"[rank {rank}] all_reduce gave {value.item()}", flush=True)
    torch.save(value, os.path.join(folder, f"sum-{rank}.pt"))
    dist.destroy_process_group()


def free_ports(count: int) -> list[int]:
    """Free ports below Linux's ephemeral range, so no other socket takes them meanwhile."""
    found: list[int] = []
    for port in random.Random().sample(range(20000, 32000), 400):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        found.append(port)
        if len(found) == count:
            return found
    raise RuntimeError("no free ports between 20000 and 32000")


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


def torchrun(node_rank: int, endpoint: str, conf: str, folder: str) -> subprocess.Popen:
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
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        endpoint,
        "--rdzv-id",
        "repro",
        "--rdzv-conf",
        conf,
        "--max-restarts",
        "0",
        __file__,
        *sys.argv[1:],
        "--worker",
        folder,
    ]
    return subprocess.Popen(command, env=env)


def launch(folder: str) -> list[int]:
    hosted, stale = free_ports(2)
    node1_endpoint = f"127.0.0.1:{stale}"  # the store is not there: nothing listens on it
    if FIXED:
        # --- fix: start
        node1_endpoint = f"127.0.0.1:{hosted}"  # the endpoint node 0 hosts the store on
        # --- fix: end
    node0 = torchrun(0, f"127.0.0.1:{hosted}", "is_host=true,join_timeout=40", folder)
    node1 = torchrun(1, node1_endpoint, "is_host=false,read_timeout=5,join_timeout=40", folder)
    codes = []
    try:
        for node in (node1, node0):
            try:
                codes.append(node.wait(timeout=DEADLINE))
            except subprocess.TimeoutExpired:
                print(f"torchrun still running after {DEADLINE} s: stopping it")
                codes.append(1)
            if codes[-1] != 0:
                break  # node 1 failed: node 0 would wait for it until its join timeout
    finally:
        stop(node1)
        stop(node0)
    return codes


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[-1])
        sys.exit(0)
    import torch

    folder = tempfile.mkdtemp(prefix="repro-rdzv-")
    exit_codes = launch(folder)
    print(f"torchrun exit codes (node 1, node 0): {exit_codes}")

    # --- check: start
    assert exit_codes == [0, 0], exit_codes
    expected = float(sum(rank + 1 for rank in range(NNODES)))  # computed here, no ranks
    for rank in range(NNODES):
        torch.testing.assert_close(
            torch.load(os.path.join(folder, f"sum-{rank}.pt")), torch.tensor([expected])
        )
    print("check: both ranks' all_reduce equals the sum of every rank's value")
    # --- check: end
    shutil.rmtree(folder, ignore_errors=True)
