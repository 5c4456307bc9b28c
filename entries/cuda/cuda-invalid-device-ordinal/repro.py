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
The check reads the workers' own reports: as many workers as each of them sees GPUs,
each on the device of its `LOCAL_RANK`, each with the sum it was meant to compute.

Needs a CUDA GPU (one is enough). Workers are ordinary subprocesses; all of them are
waited for, with a timeout.
"""

import os
import subprocess
import sys

# The scheduler gave this job one GPU: the first one this machine lets us see.
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"

import torch  # noqa: E402  (imported after the job's CUDA_VISIBLE_DEVICES is set)

FIXED = "--fixed" in sys.argv[1:]
N = 1024  # elements each worker sums on its GPU


def worker() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # fails if local_rank >= visible GPU count
    x = torch.full((N,), float(local_rank + 1), device="cuda")
    print(f"result rank={local_rank} device={torch.cuda.current_device()} "
          f"visible={torch.cuda.device_count()} sum={x.sum().item():.0f}", flush=True)


NPROC_PER_NODE = 2  # the bug: written for a two-GPU node
if FIXED:
    # --- fix: start
    # One worker per GPU this job can see, counted as `torchrun --nproc-per-node=gpu` does.
    NPROC_PER_NODE = torch.cuda.device_count()
    # --- fix: end


def launch() -> list[dict[str, int]]:
    """Start one worker per LOCAL_RANK, wait for all of them, return what they reported."""
    if not torch.cuda.is_available():
        sys.exit("this reproducer needs a CUDA GPU")
    visible = os.environ["CUDA_VISIBLE_DEVICES"]
    print(f"CUDA_VISIBLE_DEVICES={visible}, starting {NPROC_PER_NODE} worker(s)", flush=True)
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            env={**os.environ, "LOCAL_RANK": str(rank), "RANK": str(rank), "WORLD_SIZE": str(NPROC_PER_NODE)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for rank in range(NPROC_PER_NODE)
    ]
    reports = []
    for rank, process in enumerate(workers):
        try:
            output, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        print(output, end="", flush=True)
        if process.returncode != 0:
            print(f"worker with LOCAL_RANK={rank} failed with exit code {process.returncode}", flush=True)
        for line in output.splitlines():
            if line.startswith("result "):
                reports.append({k: int(v) for k, v in (field.split("=") for field in line.split()[1:])})
    return reports


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker()
        sys.exit(0)
    reports = launch()

    # --- check: start
    gpus_seen = {report["visible"] for report in reports}
    assert len(gpus_seen) == 1, f"workers saw different GPU counts: {gpus_seen}"
    gpus = gpus_seen.pop()
    assert len(reports) == NPROC_PER_NODE == gpus, f"{gpus} GPU(s), {NPROC_PER_NODE} workers, {len(reports)} finished"
    for report in reports:
        assert report["device"] == report["rank"], f"rank {report['rank']} ran on cuda:{report['device']}"
        assert report["sum"] == N * (report["rank"] + 1), f"rank {report['rank']} summed {report['sum']}"
    print(f"check: {len(reports)} worker(s), one per visible GPU, each finished its work on its own device")
    # --- check: end
