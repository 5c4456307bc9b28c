"""Reproducer for cuda-invalid-device-ordinal.

`python repro.py`: a launcher in the style of torchrun starts one worker process per GPU,
passing `LOCAL_RANK` in the environment; each worker calls
`torch.cuda.set_device(LOCAL_RANK)`. The job was given one GPU (the scheduler set
`CUDA_VISIBLE_DEVICES` to a single device), but the launch script hard-codes
`NPROC_PER_NODE = 2`. Inside the job the visible GPUs are renumbered from 0, so the
worker with `LOCAL_RANK=1` asks for a GPU that does not exist and `cudaSetDevice` fails:
`torch.AcceleratorError: CUDA error: invalid device ordinal` followed by
`GPU device may be out of range, do you have enough GPUs?` (`RuntimeError` and no hint
line in older releases).
`python repro.py --fixed`: the number of workers is taken from the GPUs visible to the
job (what `torchrun --nproc-per-node=gpu` does), so every `LOCAL_RANK` names a device.

Needs a CUDA GPU (one is enough). Workers are ordinary subprocesses; all of them are
waited for, with a timeout.
"""

import os
import subprocess
import sys

FIXED = "--fixed" in sys.argv[1:]


def worker() -> None:
    import torch

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # fails if local_rank >= visible GPU count
    x = torch.full((1024,), float(local_rank + 1), device="cuda")
    print(f"[rank{local_rank}] cuda:{torch.cuda.current_device()} of "
          f"{torch.cuda.device_count()} visible, sum {x.sum().item():.0f}", flush=True)


def job_gpus() -> str:
    """The GPU the scheduler gave this job: the first one this machine lets us see."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")
    return visible[0].strip() or "0"


NPROC_PER_NODE = 2  # the bug: written for a two-GPU node


# --- fix: start
def nproc_for(job_env: dict[str, str]) -> int:
    """One worker per GPU the job can see (torchrun --nproc-per-node=gpu)."""
    return len([d for d in job_env["CUDA_VISIBLE_DEVICES"].split(",") if d.strip()])
# --- fix: end


def launch() -> int:
    import torch

    if not torch.cuda.is_available():
        sys.exit("this reproducer needs a CUDA GPU")
    job_env = {**os.environ, "CUDA_VISIBLE_DEVICES": job_gpus()}
    nproc = nproc_for(job_env) if FIXED else NPROC_PER_NODE
    print(f"CUDA_VISIBLE_DEVICES={job_env['CUDA_VISIBLE_DEVICES']}, starting {nproc} worker(s)", flush=True)
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            env={**job_env, "LOCAL_RANK": str(rank), "RANK": str(rank), "WORLD_SIZE": str(nproc)},
        )
        for rank in range(nproc)
    ]
    failed = []
    for rank, process in enumerate(workers):
        try:
            code = process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        if code != 0:
            failed.append((rank, code))
    for rank, code in failed:
        print(f"worker with LOCAL_RANK={rank} failed with exit code {code}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker()
    else:
        sys.exit(launch())
