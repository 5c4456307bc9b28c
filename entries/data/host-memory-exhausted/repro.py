"""Reproducer for host-memory-exhausted.

`python repro.py`: a preprocessing step computes the per-feature mean and standard
deviation (normalization statistics) of a 192 MiB float32 feature file by reading the
whole file into one tensor. The process may allocate only 128 MiB more than it holds at
start: the script lowers its own address-space limit (`resource.setrlimit(RLIMIT_AS)`),
a stand-in for a host or container with less free RAM than the data set. Torch's CPU
allocator cannot get the 192 MiB block and raises `DefaultCPUAllocator: can't allocate
memory: you tried to allocate 201326592 bytes. Error code 12 (Cannot allocate memory)`.
`python repro.py --fixed`: the same statistics, accumulated in float64 over chunks of
4096 rows read one after another into one reusable 2 MiB buffer, so the peak no longer
grows with the file, under the same limit.

What this cannot show: the kernel's OOM killer. Under an address-space limit the
allocation itself fails, as it does when Linux refuses an allocation outright (a
`ulimit -v`, strict overcommit, a request larger than RAM plus swap) or on Windows. When
RAM runs out while pages are being touched instead, the kernel kills the process with
SIGKILL, and the log shows only `Killed` (exit status 137); the fix is the same.
"""

import os
import resource
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]
ROWS, FEATURES = 393_216, 128  # 192 MiB of float32 features
PERIOD = 1024  # feature j of row i holds (i % PERIOD) + j / 2: statistics in closed form
CHUNK_ROWS = 4096
HEADROOM = 128 * 1024 * 1024  # what the job may allocate beyond what it holds at start

torch.set_num_threads(1)  # no worker threads reserving address space once it is capped


def limit_address_space() -> None:
    """Stand-in for a host with 128 MiB of free RAM: cap this process's address space."""
    with open("/proc/self/statm") as statm:
        in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (in_use + HEADROOM, hard))


def write_features(path: str) -> None:
    """The data set on disk, written chunk by chunk (row-major float32)."""
    offsets = torch.arange(FEATURES, dtype=torch.float32) / 2
    with open(path, "wb") as f:
        for start in range(0, ROWS, CHUNK_ROWS):
            rows = (torch.arange(start, start + CHUNK_ROWS) % PERIOD).to(torch.float32)
            f.write((rows[:, None] + offsets).numpy().tobytes())


def feature_statistics(path: str) -> tuple[int, torch.Tensor, torch.Tensor]:
    """The bug: the whole file becomes one tensor before any statistic is computed."""
    data = torch.empty((ROWS, FEATURES), dtype=torch.float32)
    with open(path, "rb") as f:
        f.readinto(data.numpy())
    mean = data.mean(0, dtype=torch.float64)
    return data.shape[0], mean, data.to(torch.float64).std(0, correction=0)


if FIXED:
# --- fix: start
    def feature_statistics(path: str) -> tuple[int, torch.Tensor, torch.Tensor]:
        """Streams the file through one chunk-sized buffer; sums accumulate in float64."""
        total = torch.zeros(FEATURES, dtype=torch.float64)
        total_of_squares = torch.zeros(FEATURES, dtype=torch.float64)
        buffer = torch.empty((CHUNK_ROWS, FEATURES), dtype=torch.float32)
        rows_read = 0
        with open(path, "rb") as f:
            while read := f.readinto(buffer.numpy()):
                chunk = buffer[: read // (FEATURES * 4)].to(torch.float64)
                total += chunk.sum(0)
                total_of_squares += (chunk * chunk).sum(0)
                rows_read += chunk.shape[0]
        mean = total / rows_read
        return rows_read, mean, (total_of_squares / rows_read - mean * mean).sqrt()
# --- fix: end


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "features.f32")
        limit_address_space()
        write_features(path)
        rows, mean, std = feature_statistics(path)
        print(f"statistics of {rows} rows x {FEATURES} features")

        # --- check: start
        # Closed form: each residue 0..PERIOD-1 occurs ROWS / PERIOD times in every column.
        expected_mean = (PERIOD - 1) / 2 + torch.arange(FEATURES, dtype=torch.float64) / 2
        expected_std = torch.full((FEATURES,), ((PERIOD**2 - 1) / 12) ** 0.5, dtype=torch.float64)
        assert rows == ROWS, f"{rows} rows read, {ROWS} in the file"
        torch.testing.assert_close(mean, expected_mean, rtol=0, atol=1e-9)
        torch.testing.assert_close(std, expected_std, rtol=1e-12, atol=0)
        print(f"check: mean and std of all {ROWS} rows equal the closed form")
        # --- check: end


if __name__ == "__main__":
    main()
