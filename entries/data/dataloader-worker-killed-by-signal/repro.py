"""Reproducer for dataloader-worker-killed-by-signal.

`python repro.py`: a dataset whose workers each read the whole 64 MiB data file into
memory on first use (the pattern of `self.data = np.load(path)` done per worker). Each
of the two workers grows by the file size. A real host would run out of RAM only with a
real data set, so a stand-in plays the kernel's OOM killer: a worker whose resident
memory grows past its 32 MiB share gets SIGKILL, as the kernel would send it. The main
process then reports `DataLoader worker (pid N) is killed by signal: Killed.` and, chained
to it, `DataLoader worker (pid(s) N) exited unexpectedly`.
`python repro.py --fixed`: the dataset reads only the record it is asked for (seek +
read), so a worker's memory stays flat whatever the file size, and the same stand-in
never fires.

What this cannot show: the kernel's own choice of victim and its log line. On a real
host, confirm with `dmesg -T | grep -i "out of memory"` (or `journalctl -k`).
"""

import os
import signal
import sys
import tempfile

import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
RECORDS, RECORD_FLOATS = 256, 64 * 1024  # 256 records of 256 KiB: a 64 MiB file
RECORD_BYTES = RECORD_FLOATS * 4
WORKER_SHARE = 32 * 1024 * 1024  # what each worker may grow by before the "host" runs out
PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def oom_killer_stand_in(baseline: int) -> None:
    """Plays the kernel OOM killer: SIGKILL for a worker that outgrew its share of RAM."""
    grown = resident_bytes() - baseline
    if grown > WORKER_SHARE:
        print(
            f"[stand-in for the kernel OOM killer] worker {os.getpid()} grew by "
            f"{grown >> 20} MiB, over its {WORKER_SHARE >> 20} MiB share: SIGKILL",
            file=sys.stderr, flush=True,
        )
        os.kill(os.getpid(), signal.SIGKILL)  # uncatchable: no Python traceback in the worker


class WatchedDataset(Dataset):
    """Records each worker's memory before its first item and checks it after every item."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.baseline = None

    def __len__(self) -> int:
        return RECORDS

    def __getitem__(self, index: int) -> torch.Tensor:
        if self.baseline is None:  # first call in this worker
            self.baseline = resident_bytes()
        item = self.read(index)
        oom_killer_stand_in(self.baseline)
        return item


class FileDataset(WatchedDataset):
    """The bug: every worker loads and keeps the whole file (N workers, N copies)."""

    data = None

    def read(self, index: int) -> torch.Tensor:
        if self.data is None:
            with open(self.path, "rb") as f:
                buffer = bytearray(os.path.getsize(self.path))
                f.readinto(buffer)
            self.data = torch.frombuffer(buffer, dtype=torch.float32).view(RECORDS, -1)
        return self.data[index].clone()


if FIXED:
# --- fix: start
    class FileDataset(WatchedDataset):
        """Reads only the requested record: a worker holds one item at a time, not the file."""

        def read(self, index: int) -> torch.Tensor:
            with open(self.path, "rb") as f:
                f.seek(index * RECORD_BYTES)
                return torch.frombuffer(bytearray(f.read(RECORD_BYTES)), dtype=torch.float32)
# --- fix: end


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.bin")
        buffer = bytearray(RECORDS * RECORD_BYTES)
        torch.frombuffer(buffer, dtype=torch.float32).normal_()
        with open(path, "wb") as f:
            f.write(buffer)
        del buffer
        loader = DataLoader(FileDataset(path), batch_size=4, num_workers=2)
        batches = [batch for batch in loader]
        print(f"loaded {len(batches)} batches with 2 workers")

        # --- check: start
        with open(path, "rb") as f:  # the whole file, read once in the main process
            records = torch.frombuffer(bytearray(f.read()), dtype=torch.float32).view(RECORDS, -1)
        assert torch.equal(torch.cat(batches), records), "records missing, changed or out of order"
        print(f"check: all {RECORDS} records were loaded, equal to the file's contents")
        # --- check: end


if __name__ == "__main__":
    main()
