"""Reproducer for hf-datasets-generation-error.

`python repro.py`: a labelling export is written as CSV by joining fields with commas,
so a review whose text contains a comma has one field more than the header. Loading it
with `load_dataset("csv", ...)` fails inside the builder: pandas' CSV parser raises
`ParserError: Error tokenizing data. C error: Expected 3 fields in line 6, saw 4`, and
`DatasetBuilder._prepare_split_single` re-raises it as `DatasetGenerationError: An error
occurred while generating the dataset`, the last line of the traceback. The cause is
the exception printed above it.
`python repro.py --fixed`: the cause is fixed: the export writes the file with
`csv.writer`, which quotes fields that contain commas. The check loads the file and
compares every row, commas included, with the rows exported.
"""

import csv
import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
datasets.disable_progress_bars()

header = ["id", "review", "label"]
rows = [
    [i, "Great product, works as described" if i % 5 == 0 else f"review number {i}", i % 2]
    for i in range(1, 101)
]


def export(path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in [header, *rows]:
            f.write(",".join(str(field) for field in row) + "\n")


if FIXED:
    # --- fix: start
    def export(path: str) -> None:
        with open(path, "w", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows([header, *rows])  # quotes fields that contain commas
    # --- fix: end


with tempfile.TemporaryDirectory(prefix="repro-datasets-generation-") as workdir:
    path = os.path.join(workdir, "reviews.csv")
    export(path)
    reviews = datasets.load_dataset(
        "csv", data_files=path, split="train", cache_dir=os.path.join(workdir, "cache")
    )
    print(reviews)

    # --- check: start
    assert reviews.column_names == header, reviews.column_names
    loaded = [[r["id"], r["review"], r["label"]] for r in reviews]
    assert loaded == rows, "loaded rows differ from the rows exported"
    print(f"check: all {reviews.num_rows} rows loaded, review texts with commas intact")
    # --- check: end
