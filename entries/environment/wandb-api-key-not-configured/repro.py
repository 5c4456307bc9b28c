"""Reproducer for wandb-api-key-not-configured.

The machine: a batch job with no W&B API key (no `WANDB_API_KEY`, no `~/.netrc` entry
from `wandb login`) and no terminal to type one into, as under Slurm, cron, CI or a
container. It needs no network: wandb fails while looking for the key, before it
connects anywhere.

`python repro.py`: the training script calls `wandb.init`; wandb finds no key and cannot
prompt, and raises `UsageError` (wandb 0.31.0: `No API key configured. Use `wandb login`
to log in.`; up to 0.22.3: `api_key not configured (no-tty). call
wandb.login(key=[your_api_key])`).
`python repro.py --fixed`: `WANDB_MODE=offline` makes wandb record the run on disk
(`wandb sync` uploads it later from a machine with a key); the check reads the metrics
back from the run's local file and compares them with the losses the loop computed.
"""

import glob
import json
import os
import struct
import sys

import torch
import wandb
from wandb.proto import wandb_internal_pb2

FIXED = "--fixed" in sys.argv[1:]

# The machine: no key in the environment, a home folder without ~/.netrc.
os.environ.pop("WANDB_API_KEY", None)
os.environ["WANDB_DIR"] = os.getcwd()

if FIXED:
    # --- fix: start
    # No key on this machine: record the run locally, upload it later with `wandb sync`.
    os.environ["WANDB_MODE"] = "offline"
    # --- fix: end


def logged_history(run_dir: str) -> list[dict]:
    """Read the history records back from the run's `.wandb` file (a LevelDB-style log)."""
    (path,) = glob.glob(os.path.join(run_dir, "run-*.wandb"))
    with open(path, "rb") as handle:
        data = handle.read()
    assert data[:4] == b":W&B", data[:7]
    rows, position, pending = [], 7, b""
    while position + 7 <= len(data):
        room = 32768 - position % 32768
        if room < 7:  # a block's tail too short for a header is padding
            position += room
            continue
        _crc, length, kind = struct.unpack("<IHB", data[position : position + 7])
        chunk = data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (2, 3):  # first and middle pieces of a record
            pending = chunk if kind == 2 else pending + chunk
            continue
        if kind not in (1, 4):
            continue
        record = wandb_internal_pb2.Record.FromString(pending + chunk if kind == 4 else chunk)
        if record.WhichOneof("record_type") == "history":
            rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item})
    return rows


torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([1.5, -2.0, 0.5]) + 0.1
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

run = wandb.init(project="repro", config={"lr": 0.1})
losses = []
for step in range(5):
    loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    run.log({"loss": loss.item()}, step=step)
run_dir = os.path.dirname(run.dir)
run.finish()
wandb.teardown()  # stop wandb's service, which writes the run file

# --- check: start
history = logged_history(run_dir)
assert [row["_step"] for row in history] == list(range(5)), history  # every step written
assert [row["loss"] for row in history] == losses, (history, losses)  # the values logged
print(f"check: all {len(losses)} logged losses are in the local run file and equal the loop's")
# --- check: end
