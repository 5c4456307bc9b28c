"""Reproducer for datasets-invalid-glob-pattern.

An environment that installed datasets 2.14.4 and later got fsspec 2023.12.0 (another
package's requirement, or `pip install -U fsspec`): the pair is installed apart from the
catalog's pins, with the pyarrow and huggingface_hub releases datasets 2.14.4 still
imports with (pyarrow 20.0.0, huggingface_hub 0.36.0), and put first on `sys.path`.

`python repro.py`: `load_dataset(folder)` on a local folder holding `train.jsonl` and
`test.jsonl` (no `data_files` given) looks for each split's files with datasets' default
patterns, such as `**[-._ 0-9/]train[-._ 0-9]*`, through fsspec's `glob`. fsspec 2023.12.0
translates globs itself and refuses a `**` that is not a whole path component:
`ValueError: Invalid pattern: '**' can only be an entire path component`. A Hub dataset
without a loading script fails the same way.
`python repro.py --fixed`: datasets is upgraded (the old folders leave the path, as
`pip install -U datasets` replaces them; here datasets 5.2.0, the catalog's pin, with the
fsspec it runs with), whose patterns fit the fsspec it finds. The check: both splits are
found, and every row equals the records their files were written from.

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

FIXED = "--fixed" in sys.argv[1:]

# The environment: datasets 2.14.4 with fsspec 2023.12.0, installed apart
# (reproducer.private_requirements) and first on the import path.
PRIVATE = os.path.join(sys.prefix, "failpedia-private")
OLD_RELEASES = [
    os.path.join(PRIVATE, release)
    for release in (
        "datasets-2.14.4",
        "fsspec-2023.12.0",
        "huggingface-hub-0.36.0",
        "pyarrow-20.0.0",
    )
]
sys.path[:0] = OLD_RELEASES

if FIXED:
    # --- fix: start
    # Upgrade datasets to 2.14.6 or later (`pip install -U datasets`), which picks glob
    # patterns that the installed fsspec accepts.
    for folder in OLD_RELEASES:
        sys.path.remove(folder)
    # --- fix: end

import datasets  # noqa: E402
import fsspec  # noqa: E402

print("datasets", datasets.__version__, "| fsspec", fsspec.__version__)

work = tempfile.mkdtemp(prefix="repro-datasets-glob-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
folder = os.path.join(work, "reviews")
os.makedirs(folder)
RECORDS = {
    "train": [{"id": i, "text": f"review {i}", "label": i % 2} for i in range(20)],
    "test": [{"id": 100 + i, "text": f"held out {i}", "label": (i + 1) % 2} for i in range(8)],
}
for split, records in RECORDS.items():
    with open(os.path.join(folder, f"{split}.jsonl"), "w") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")

loaded = datasets.load_dataset(folder, cache_dir=os.path.join(work, "cache"))
print("splits:", {name: split.num_rows for name, split in loaded.items()})

# --- check: start
assert sorted(loaded) == sorted(RECORDS), f"splits found: {sorted(loaded)}"
for split, records in RECORDS.items():
    assert loaded[split].to_list() == records, f"{split}: rows differ from the records written"
total = sum(len(records) for records in RECORDS.values())
print(
    f"check: both splits found, all {total} rows equal to the records the files were written from"
)
# --- check: end
