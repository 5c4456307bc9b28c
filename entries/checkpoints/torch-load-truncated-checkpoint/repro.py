"""Reproducer for torch-load-truncated-checkpoint.

`python repro.py`: a training process saves a good checkpoint after step 1. While it
saves step 2 over the same file with a plain `torch.save(state, path)`, the process is
killed (a file-size limit delivers SIGXFSZ, standing in for a preemption, the OOM killer
or a full disk), once before it wrote its first byte and once halfway through the write.
Each time a restarted job calls `torch.load` on the file: the empty one fails in the
unpickler (`EOFError: Ran out of input`), the half-written zip archive, which has no
central directory at its end, fails in the zip reader.
`python repro.py --fixed`: checkpoints are saved atomically: written to a temporary file in
the same folder, flushed to disk, then moved over the old one with `os.replace`. The crash
now only loses the temporary file; both restarts load the intact step-1 checkpoint. The
check compares the resumed model and optimizer state with step 1's, computed again.
"""

import os
import resource
import signal
import subprocess
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]


def training_state(step: int) -> dict:
    torch.manual_seed(step)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 256)).sum().backward()
    optimizer.step()
    return {"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()}


def save_checkpoint(state: dict, path: str) -> None:
    torch.save(state, path)  # opens `path` for writing: the old checkpoint is gone at once


if FIXED:
    # --- fix: start
    def save_checkpoint(state: dict, path: str) -> None:
        """Write to a temporary file next to `path`, then swap it in with one rename."""
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp_path = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                torch.save(state, f)
                f.flush()
                os.fsync(f.fileno())  # the bytes are on disk before the name points at them
            os.replace(tmp_path, path)  # atomic: readers see the old file or the new, never half
        except BaseException:
            if os.path.exists(tmp_path):
                os.remove(tmp_path)
            raise
    # --- fix: end


if "--crash-while-saving" in sys.argv:
    # The trainer process for step 2: any file it writes past `limit` bytes kills it.
    path, limit = sys.argv[2], int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it by default
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    save_checkpoint(training_state(step=2), path)
    sys.exit(0)

if "--resume" in sys.argv:
    # The restarted job. It passes weights_only=False, as every torch.load did by default
    # before torch 2.6 (with the 2.6+ default an empty file raises a bare `EOFError`).
    state = torch.load(sys.argv[2], weights_only=False)
    print("resumed from step", state["step"])
    sys.exit(0)

resumed = []
with tempfile.TemporaryDirectory(prefix="repro-truncated-ckpt-") as workdir:
    for crash in ("before its first byte", "halfway"):
        folder = os.path.join(workdir, crash.replace(" ", "-"))
        os.mkdir(folder)
        ckpt = os.path.join(folder, "last.pt")
        save_checkpoint(training_state(step=1), ckpt)
        size = os.path.getsize(ckpt)
        print(f"step 1 checkpoint saved: {size} bytes")

        limit = 0 if crash == "before its first byte" else size // 2
        trainer = subprocess.run(
            [sys.executable, __file__, "--crash-while-saving", ckpt, str(limit), *sys.argv[1:]]
        )
        killed_by = signal.Signals(-trainer.returncode).name if trainer.returncode < 0 else trainer.returncode
        print(f"trainer died while saving step 2, {crash} ({killed_by}); last.pt is now "
              f"{os.path.getsize(ckpt)} bytes; files in the folder: {sorted(os.listdir(folder))}")

        print("restarting: resuming from last.pt")
        restart = subprocess.run([sys.executable, __file__, "--resume", ckpt, *sys.argv[1:]])
        print(f"restarted job exited with status {restart.returncode}")
        resumed.append((restart.returncode, torch.load(ckpt) if restart.returncode == 0 else None))

# --- check: start
step_1 = training_state(step=1)  # the state the step-1 save wrote, computed again
assert len(resumed) == 2
for returncode, state in resumed:
    assert returncode == 0 and state is not None
    assert state["step"] == 1
    torch.testing.assert_close(state["model"], step_1["model"])
    torch.testing.assert_close(state["optimizer"], step_1["optimizer"])
print("check: both restarts resumed the complete step-1 model and optimizer state")
# --- check: end
