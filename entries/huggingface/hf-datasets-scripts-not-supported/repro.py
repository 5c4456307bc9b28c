"""Reproducer for hf-datasets-scripts-not-supported.

A dataset folder in the layout datasets 2.x and 3.x loaded: a loading script named after
the folder (`measurements/measurements.py`, a `GeneratorBasedBuilder` that declares the
columns' types and reads `measurements.jsonl` beside it).

`python repro.py`: `load_dataset(folder)` finds `measurements.py` and, since datasets 4.0.0
runs no loading scripts, raises `RuntimeError: Dataset scripts are no longer supported, but
found measurements.py`. A Hub dataset with a script fails the same way.
`python repro.py --fixed`: the data file is loaded with the packaged `json` builder, with
the `Features` the script declared, so no code from the dataset runs. The check compares
every row, column and type with the records the folder was written from.

Everything is written in the script into a temporary folder; nothing is downloaded, and
the run uses the CPU.
"""

import json
import os
import sys
import tempfile
import textwrap

os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

from datasets import Features, Value, load_dataset

FIXED = "--fixed" in sys.argv[1:]

# The data the folder holds, and the types its loading script gives the columns.
RECORDS = [
    {"id": i, "sensor": f"s{i % 3}", "reading": round(0.25 * i - 1.0, 2), "valid": i % 4 != 0}
    for i in range(12)
]
FEATURES = Features({"id": Value("int32"), "sensor": Value("string"),
                     "reading": Value("float32"), "valid": Value("bool")})

SCRIPT = textwrap.dedent('''
    import json
    import os

    import datasets

    class Measurements(datasets.GeneratorBasedBuilder):
        def _info(self):
            return datasets.DatasetInfo(features=datasets.Features({
                "id": datasets.Value("int32"), "sensor": datasets.Value("string"),
                "reading": datasets.Value("float32"), "valid": datasets.Value("bool")}))

        def _split_generators(self, dl_manager):
            path = os.path.join(os.path.dirname(__file__), "measurements.jsonl")
            return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"path": path})]

        def _generate_examples(self, path):
            with open(path) as f:
                for key, line in enumerate(f):
                    yield key, json.loads(line)
''')

with tempfile.TemporaryDirectory(prefix="repro-dataset-") as workdir:
    folder = os.path.join(workdir, "measurements")
    os.makedirs(folder)
    with open(os.path.join(folder, "measurements.py"), "w") as f:
        f.write(SCRIPT)
    with open(os.path.join(folder, "measurements.jsonl"), "w") as f:
        f.writelines(json.dumps(record) + "\n" for record in RECORDS)
    print("dataset folder:", sorted(os.listdir(folder)))
    cache_dir = os.path.join(workdir, "cache")

    load_args: dict = {"path": folder}
    if FIXED:
        # --- fix: start
        # Load the data file with the packaged json builder and the types the script declared.
        load_args = {"path": "json", "data_files": os.path.join(folder, "measurements.jsonl"),
                     "features": FEATURES}
        # --- fix: end

    dataset = load_dataset(**load_args, split="train", cache_dir=cache_dir)
    print(dataset)

    # --- check: start
    # Every record the folder was written from is there, in order, with the declared types.
    assert dataset.features == FEATURES, dataset.features
    assert dataset.num_rows == len(RECORDS), dataset.num_rows
    for row, record in zip(dataset, RECORDS):
        assert row.keys() == record.keys(), row
        assert row["id"] == record["id"] and row["sensor"] == record["sensor"], row
        assert row["valid"] is record["valid"], row
        assert abs(row["reading"] - record["reading"]) < 1e-6, row
    print(f"check: all {len(RECORDS)} rows equal the source records, with the declared column types")
    # --- check: end
