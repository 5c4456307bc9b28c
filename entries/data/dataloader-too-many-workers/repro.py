"""Reproducer for dataloader-too-many-workers.

`python repro.py`: the job is allotted 2 CPUs (a Slurm `--cpus-per-task=2`, a
`docker run --cpuset-cpus`; here `os.sched_setaffinity` pins the process to at most 2 of
the machine's CPUs), and the training config, written for a bigger machine, asks for
`num_workers=8`. `DataLoader` compares the worker count with the CPUs this process may run
on (`len(os.sched_getaffinity(0))`) and warns `UserWarning: This DataLoader will create 8
worker processes in total. Our suggested max number of worker in current system is 2,
which is smaller than what this DataLoader is going to create. ...`, once when the loader
is built and once when the epoch starts: 8 worker processes share 2 CPUs with the main
process. This small epoch still finishes; on a real data set the oversubscription shows as
slow loading, and sometimes as a freeze.
`python repro.py --fixed`: the worker count is capped at the CPUs the process may run on
(its affinity, which a cpuset narrows and `os.cpu_count()` ignores). The check asserts
that the shuffled epoch delivered every sample exactly once, each with the values computed
without the DataLoader, and that the worker-count warning was not shown.
"""

import os
import sys
import warnings

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
N, BATCH = 48, 4
CONFIG_NUM_WORKERS = 8  # from a training config written for an 8-core workstation
RAW = torch.arange(N * 3, dtype=torch.float32).reshape(N, 3)  # one row of raw values per sample

shown = []  # the warnings Python showed, for the check; output unchanged
_show = warnings.showwarning


def showwarning(message, category, filename, lineno, file=None, line=None):
    shown.append(str(message))
    _show(message, category, filename, lineno, file, line)


warnings.showwarning = showwarning


class Features(Dataset):
    """Each sample: its index and its raw row, scaled and shifted (the preprocessing)."""

    def __len__(self) -> int:
        return N

    def __getitem__(self, index: int) -> tuple[int, torch.Tensor]:
        return index, RAW[index] * 0.5 + 1.0


def main() -> None:
    if hasattr(os, "sched_setaffinity"):  # the job's allotment: at most 2 of the machine's CPUs
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    num_workers = CONFIG_NUM_WORKERS
    if FIXED:
# --- fix: start
        # Never start more workers than the CPUs this process may run on: its affinity,
        # which a container's or a scheduler's cpuset narrows (os.cpu_count() counts the
        # whole machine).
        if hasattr(os, "sched_getaffinity"):
            usable_cpus = len(os.sched_getaffinity(0))
        else:
            usable_cpus = os.cpu_count() or 1
        num_workers = min(num_workers, usable_cpus)
# --- fix: end

    loader = DataLoader(
        Features(),
        batch_size=BATCH,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
        num_workers=num_workers,
    )
    batches = [(index.clone(), value.clone()) for index, value in loader]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{num_workers} workers on {cpus} CPUs: {len(batches)} batches loaded")

    # --- check: start
    indices = torch.cat([index for index, _ in batches])
    values = torch.cat([value for _, value in batches])
    assert sorted(indices.tolist()) == list(range(N)), "a sample was dropped or loaded twice"
    reference = RAW * 0.5 + 1.0  # the preprocessing applied to every row at once, no DataLoader
    assert torch.equal(values, reference[indices]), "a sample's values differ from the reference"
    worker_warnings = [message for message in shown if "worker processes in total" in message]
    assert not worker_warnings, f"the worker-count warning was shown {len(worker_warnings)} time(s)"
    print(f"check: all {N} samples loaded exactly once with their values; no worker-count warning")
    # --- check: end


if __name__ == "__main__":
    main()
