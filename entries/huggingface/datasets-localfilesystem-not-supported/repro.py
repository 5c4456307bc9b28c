"""Reproducer for datasets-localfilesystem-not-supported.

An environment that installed datasets 2.14.4 and later got fsspec 2023.10.0 (another
package's requirement, or `pip install -U fsspec`): the pair is installed apart from the
catalog's pins, with the pyarrow and huggingface_hub releases datasets 2.14.4 still
imports with (pyarrow 20.0.0, which has `pa.PyExtensionType`; huggingface_hub 0.36.0,
which has `HfFolder`), and put first on `sys.path`.

`python repro.py`: `load_dataset("json", data_files=...)` on a local JSON Lines file
writes the Arrow cache on the local disk, then `as_dataset` asks `is_remote_filesystem`
whether that cache is remote. datasets 2.14.4 answers `fs.protocol != "file"`, and
fsspec 2023.10.0 gives the local filesystem the protocol `("file", "local")`, so the
local cache counts as remote: `NotImplementedError: Loading a dataset cached in a
LocalFileSystem is not supported.`
`python repro.py --fixed`: datasets is upgraded (the old folders leave the path, as
`pip install -U datasets` replaces them; here datasets 5.2.0, the catalog's pin), and the
same call loads the file. The check compares every row and column with the records
the file was written from.

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

# The environment: datasets 2.14.4 with fsspec 2023.10.0, installed apart
# (reproducer.private_requirements) and first on the import path.
PRIVATE = os.path.join(sys.prefix, "failpedia-private")
OLD_RELEASES = [
    os.path.join(PRIVATE, release)
    for release in (
        "datasets-2.14.4",
        "fsspec-2023.10.0",
        "huggingface-hub-0.36.0",
        "pyarrow-20.0.0",
    )
]
sys.path[:0] = OLD_RELEASES

if FIXED:
    # --- fix: start
    # Upgrade datasets to 2.14.6 or later (`pip install -U datasets`), whose
    # is_remote_filesystem knows fsspec's ("file", "local") protocol.
    for folder in OLD_RELEASES:
        sys.path.remove(folder)
    # --- fix: end

import datasets  # noqa: E402
import fsspec  # noqa: E402

print("datasets", datasets.__version__, "| fsspec", fsspec.__version__)
print("local filesystem protocol:", fsspec.filesystem("file").protocol)

work = tempfile.mkdtemp(prefix="repro-datasets-localfs-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
RECORDS = [{"id": i, "text": f"sample {i}", "label": i % 3} for i in range(25)]
data_file = os.path.join(work, "train.jsonl")
with open(data_file, "w") as handle:
    for record in RECORDS:
        handle.write(json.dumps(record) + "\n")

loaded = datasets.load_dataset(
    "json", data_files={"train": data_file}, cache_dir=os.path.join(work, "cache")
)
train = loaded["train"]
print(f"loaded {train.num_rows} rows with columns {train.column_names}")

# --- check: start
assert train.num_rows == len(RECORDS), (train.num_rows, len(RECORDS))
assert train.column_names == ["id", "text", "label"], train.column_names
assert train.to_list() == RECORDS, "loaded rows differ from the records written"
print(f"check: all {len(RECORDS)} rows loaded, equal to the records the file was written from")
# --- check: end
