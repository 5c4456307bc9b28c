"""Reproducer for hf-datasets-data-files-not-found.

`python repro.py`: a project keeps its data next to its training script
(`project/data/train.jsonl`, `project/data/validation.jsonl`), and the script passes
`data_files` as paths relative to the project (`"data/train.jsonl"`). The job is started
from another working directory, as a scheduler or a launcher does (`job/`), so datasets
resolves the relative paths against that directory and raises
`FileNotFoundError: Unable to find '.../job/data/train.jsonl'`.
`python repro.py --fixed`: the paths are resolved against the project folder (in a real
script, the folder of `__file__`), whatever the working directory. The check loads both
splits and compares every row with the records written.
"""

import json
import os
import sys
import tempfile

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
datasets.disable_progress_bars()

records = {
    split: [{"id": i, "text": f"{split} example {i}", "label": i % 3} for i in range(n)]
    for split, n in (("train", 120), ("validation", 30))
}

with tempfile.TemporaryDirectory(prefix="repro-data-files-") as workdir:
    project_dir = os.path.join(workdir, "project")  # where the training script lives
    os.makedirs(os.path.join(project_dir, "data"))
    for split, rows in records.items():
        with open(os.path.join(project_dir, "data", f"{split}.jsonl"), "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")

    job_dir = os.path.join(workdir, "job")  # the working directory the job starts in
    os.makedirs(job_dir)
    os.chdir(job_dir)
    print("working directory:", os.getcwd())

    data_files = {"train": "data/train.jsonl", "validation": "data/validation.jsonl"}
    if FIXED:
        # --- fix: start
        data_files = {split: os.path.join(project_dir, path) for split, path in data_files.items()}
        # --- fix: end

    loaded = datasets.load_dataset(
        "json", data_files=data_files, cache_dir=os.path.join(workdir, "cache")
    )
    print(loaded)

    # --- check: start
    assert set(loaded) == set(records), sorted(loaded)
    for split, rows in records.items():
        assert loaded[split].num_rows == len(rows), (split, loaded[split].num_rows)
        assert loaded[split].to_list() == rows, f"{split}: loaded rows differ from the records written"
    print("check: " + ", ".join(f"{s} {len(r)} rows" for s, r in records.items()) + " loaded with their values")
    # --- check: end
