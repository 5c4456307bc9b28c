"""Reproducer for datasets-unknown-split.

A fine-tuning script written for a dataset that ships `train` and `validation` splits is
pointed at a local dataset folder holding a single data file, `data/train.jsonl` (100
support tickets), as many exported or scraped datasets do.

`python repro.py`: the script asks for the evaluation data with
`load_dataset(folder, split="validation")`. The folder's files define one split, `train`,
so the reader raises `ValueError: Unknown split "validation". Should be one of ['train'].`
`python repro.py --fixed`: the script loads the split that exists and makes the
validation split itself, `train_test_split(test_size=0.2, seed=0)`, reproducible by its
seed. The check: training and validation rows together are exactly the rows of the file
(read with the json module), none lost, none in both, 80 and 20 of them, and the same seed
gives the same validation rows again.

Everything is written in the script into a temporary folder; nothing is downloaded, and
the run uses the CPU.
"""

import json
import os
import sys
import tempfile

_work = tempfile.TemporaryDirectory(prefix="repro-unknown-split-")
os.environ["HF_HOME"] = os.path.join(_work.name, "hf-home")
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
datasets.disable_progress_bars()

folder = os.path.join(_work.name, "tickets")
os.makedirs(os.path.join(folder, "data"))
path = os.path.join(folder, "data", "train.jsonl")
with open(path, "w") as handle:
    for i in range(100):
        handle.write(json.dumps({"id": i, "text": f"ticket number {i}", "label": i % 3}) + "\n")


def load_splits(folder: str) -> tuple[datasets.Dataset, datasets.Dataset]:
    """The script's loading step, written for a dataset with a validation split."""
    return datasets.load_dataset(folder, split="train"), datasets.load_dataset(folder, split="validation")


if FIXED:
    # --- fix: start
    def load_splits(folder: str) -> tuple[datasets.Dataset, datasets.Dataset]:
        # The folder defines only "train": hold out 20% of it, reproducibly (fixed seed).
        parts = datasets.load_dataset(folder, split="train").train_test_split(test_size=0.2, seed=0)
        return parts["train"], parts["test"]
    # --- fix: end


train, validation = load_splits(folder)
print(f"train: {len(train)} rows, validation: {len(validation)} rows")

# --- check: start
with open(path) as handle:
    original = sorted(json.loads(line)["id"] for line in handle)
train_ids, validation_ids = list(train["id"]), list(validation["id"])
assert not set(train_ids) & set(validation_ids), "rows in both splits"
assert sorted(train_ids + validation_ids) == original, "rows lost or duplicated"
assert (len(train_ids), len(validation_ids)) == (80, 20), (len(train_ids), len(validation_ids))
_, again = load_splits(folder)
assert list(again["id"]) == validation_ids, "the split is not reproducible"
print(f"check: {len(train_ids)} + {len(validation_ids)} rows are the file's {len(original)}, none lost")
# --- check: end
