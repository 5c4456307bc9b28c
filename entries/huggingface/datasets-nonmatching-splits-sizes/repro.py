"""Reproducer for datasets-nonmatching-splits-sizes.

A dataset repository (here a local folder, as `snapshot_download` or `git clone` leaves
one) whose card, README.md, records in its `dataset_info` block the split sizes of an
earlier version of its data: 40 training rows were recorded, and rows were appended to
`data/train.jsonl` afterwards without the card being regenerated.

`python repro.py`: `load_dataset(folder)` generates the splits from the files, then
compares each split's row count with the card's (`verify_splits`, on by default):
`NonMatchingSplitsSizesError: [{'expected': SplitInfo(name='train', ...,
num_examples=40), 'recorded': SplitInfo(name='train', ..., num_examples=48, ...)}]`.
`python repro.py --fixed`: the card's recorded sizes are regenerated from the data files
as they are now (what `push_to_hub` writes into the card), and the same call loads. The
check: the split sizes still pass datasets' own verification against the card, and every
row of both splits equals the records the files were written from.

Everything is written in the script into a temporary folder; nothing is downloaded, and
the run uses the CPU.
"""

import atexit
import json
import os
import shutil
import sys
import tempfile

os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets
from huggingface_hub import DatasetCard

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-datasets-splits-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
folder = os.path.join(work, "support-tickets")
os.makedirs(os.path.join(folder, "data"))
RECORDS = {
    "train": [{"id": i, "text": f"ticket {i}", "label": i % 4} for i in range(48)],
    "test": [{"id": 1000 + i, "text": f"held out {i}", "label": i % 4} for i in range(12)],
}
for split, records in RECORDS.items():
    with open(os.path.join(folder, "data", f"{split}.jsonl"), "w") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")

# The card as it was written when the train split held 40 rows.
CARD = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train.jsonl
  - split: test
    path: data/test.jsonl
dataset_info:
  features:
  - name: id
    dtype: int64
  - name: text
    dtype: string
  - name: label
    dtype: int64
  splits:
  - name: train
    num_bytes: 1150
    num_examples: 40
  - name: test
    num_bytes: 362
    num_examples: 12
---
# Support tickets
"""
readme = os.path.join(folder, "README.md")
with open(readme, "w") as handle:
    handle.write(CARD)

if FIXED:
    # --- fix: start
    # Regenerate the card's recorded split sizes from the data files as they are now.
    card = DatasetCard.load(readme)
    for split_info in card.data.dataset_info["splits"]:
        path = os.path.join(folder, "data", f"{split_info['name']}.jsonl")
        with open(path) as handle:
            split_info["num_examples"] = sum(1 for line in handle if line.strip())
        split_info.pop("num_bytes", None)  # not verified; datasets records it on load
    card.save(readme)
    # --- fix: end

print("datasets", datasets.__version__)
loaded = datasets.load_dataset(folder, cache_dir=os.path.join(work, "cache"))
print("splits:", {name: split.num_rows for name, split in loaded.items()})

# --- check: start
recorded = {
    s["name"]: s["num_examples"] for s in DatasetCard.load(readme).data.dataset_info["splits"]
}
assert recorded == {name: len(records) for name, records in RECORDS.items()}, recorded
assert sorted(loaded) == sorted(RECORDS), f"splits found: {sorted(loaded)}"
for split, records in RECORDS.items():
    assert loaded[split].to_list() == records, f"{split}: rows differ from the records written"
total = sum(len(records) for records in RECORDS.values())
print(
    f"check: the card's sizes verified, all {total} rows present and equal to the records written"
)
# --- check: end
