"""Reproducer for nccl-not-built.

`python repro.py`: a training script written for a Linux GPU cluster hard-codes
`dist.init_process_group(backend="nccl")` and is run on a machine whose PyTorch has no
NCCL: a CPU-only wheel (as here), or any macOS or Windows build. `init_process_group`
first warns `Attempted to get default timeout for nccl backend, but NCCL support is not
compiled`, then `_new_process_group_helper` finds `is_nccl_available()` false and raises
`RuntimeError: Distributed package doesn't have NCCL built in`.
`python repro.py --fixed`: the backend is chosen from what the machine has: NCCL only
when CUDA devices and NCCL are both available, gloo otherwise. On this CPU machine the
process group comes up with gloo, DDP wraps the model and a training step runs. The check
compares the DDP step's gradients with those of the same model without DDP.
"""

import copy
import random
import socket
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

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


def main() -> None:
    backend = "nccl"  # the bug: assumes a Linux machine with NVIDIA GPUs and NCCL
    if FIXED:
        # --- fix: start
        # NCCL only where it exists and there are GPUs to use it with; gloo everywhere
        # else (CPU-only wheels, macOS, Windows, CPU CI runners).
        backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
        # --- fix: end
    print(f"torch {torch.__version__}: is_nccl_available()={dist.is_nccl_available()}, "
          f"cuda available={torch.cuda.is_available()}, backend={backend!r}", flush=True)
    # One process here; torchrun would pass the same call RANK/WORLD_SIZE through env://.
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{free_port()}",
                            rank=0, world_size=1)
    device = torch.device("cuda", 0) if backend == "nccl" else torch.device("cpu")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1).to(device)
    reference = copy.deepcopy(model)  # the same weights, trained without DDP
    x = torch.randn(8, 4, device=device)
    ddp_model = DDP(model)
    loss = ddp_model(x).pow(2).mean()
    loss.backward()
    print(f"one DDP step with {dist.get_backend()}: loss {loss.item():.4f}")

    # --- check: start
    reference(x).pow(2).mean().backward()
    for trained, expected in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(trained.grad, expected.grad)
    print("check: the DDP step's gradients equal a plain model's on the same batch")
    # --- check: end
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
