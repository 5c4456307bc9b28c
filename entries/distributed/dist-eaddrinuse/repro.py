"""Reproducer for dist-eaddrinuse.

`python repro.py`: job A, a one-rank training job in its own process, is running and its
rank 0 holds the rendezvous port (its TCPStore server listens there). Job B is started on
the same machine with the same `MASTER_PORT`, as happens when two jobs both keep
torchrun's default 29500 (the reproducer uses a free port instead of 29500 itself, so it
cannot collide with anything else on the machine). Job B's rank 0 tries to start its own
store server on that port and `init_process_group` fails with `The server socket has
failed to listen on any local network address. ... EADDRINUSE ... address already in
use`.
`python repro.py --fixed`: job B asks the operating system for a free port (bind to port
0, read the number back) and puts it in `MASTER_PORT`; both jobs run side by side. The
check confirms that job A is still running and that job B's `all_reduce` ran in its own
one-rank group.
"""

import os
import random
import socket
import subprocess
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

FIXED = "--fixed" in sys.argv[1:]


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


def init_job(port: int) -> None:
    """What torchrun does for a one-process job on one machine, then init_process_group."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1")
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))


if "--job-a" in sys.argv:
    init_job(int(sys.argv[-1]))
    print("job A: training, holding its rendezvous port", flush=True)
    sys.stdin.read()  # keep running until job B is done (or its parent goes away)
    dist.destroy_process_group()
    sys.exit(0)

PORT_IN_THE_CONFIG = free_port()  # stands in for the default MASTER_PORT=29500 both jobs use

job_a = subprocess.Popen(
    [sys.executable, __file__, "--job-a", str(PORT_IN_THE_CONFIG)],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    text=True,
)
try:
    print(job_a.stdout.readline().strip(), flush=True)  # wait until job A is up

    port = PORT_IN_THE_CONFIG  # the bug: the same MASTER_PORT as the job already running
    if FIXED:
        # --- fix: start
        # Give each job its own rendezvous port: ask the OS for a free one (bind to port
        # 0, read the number back) instead of reusing the default 29500.
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        # --- fix: end

    print(f"job B: init_process_group with MASTER_PORT={port}", flush=True)
    init_job(port)
    total = torch.ones(3)
    dist.all_reduce(total)
    print(f"job B: running next to job A, all_reduce -> {total.tolist()}", flush=True)

    # --- check: start
    assert job_a.poll() is None, "job A stopped"
    assert dist.get_world_size() == 1, "job B joined another job's group"
    torch.testing.assert_close(total, torch.ones(3))  # a sum over job B's one rank
    print("check: job B ran its own one-rank group while job A kept running")
    # --- check: end
    dist.destroy_process_group()
finally:
    job_a.stdin.close()  # lets job A finish
    try:
        job_a.wait(timeout=30)
    except subprocess.TimeoutExpired:
        job_a.kill()
        job_a.wait()
