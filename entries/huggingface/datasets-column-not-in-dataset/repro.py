"""Reproducer for datasets-column-not-in-dataset.

A preprocessing step in the style of the transformers example scripts: the raw columns
are read from the training split, `column_names = raw["train"].column_names`, and every
split is mapped with `remove_columns=column_names`, so that only the model's inputs stay.
Here the test split was published without labels (as shared-task test sets are), so it
has the columns `id` and `text` and no `label`.

`python repro.py`: `DatasetDict.map` maps each split in turn; on the test split `map`
checks `remove_columns` against the split's own columns and raises `ValueError: Column to
remove ['label'] not in the dataset. Current columns in the dataset: ['id', 'text']`.
`python repro.py --fixed`: each split removes the columns it really has
(`split.column_names`). The check: every split keeps all its rows, in order, each with the
token ids of its own text (a word-level lookup computed independently), the training rows
with their labels, and none of the raw columns is left.

Everything is built in the script; nothing is downloaded, and the run uses the CPU.
"""

import os
import sys
import tempfile

_home = tempfile.TemporaryDirectory(prefix="repro-column-not-in-dataset-")
os.environ["HF_HOME"] = _home.name
os.environ["HF_DATASETS_OFFLINE"] = "1"

import datasets  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
datasets.disable_progress_bars()

TRAIN = [(1, "printer is out of paper", 0), (2, "cannot log in", 1), (3, "portal is slow", 1)]
TEST = [(10, "paper jam again"), (11, "log in fails"), (12, "slow printer"), (13, "portal down")]
raw = datasets.DatasetDict(
    train=datasets.Dataset.from_dict(
        {"id": [r[0] for r in TRAIN], "text": [r[1] for r in TRAIN], "label": [r[2] for r in TRAIN]}
    ),
    test=datasets.Dataset.from_dict({"id": [r[0] for r in TEST], "text": [r[1] for r in TEST]}),
)
VOCAB = {word: i + 1 for i, word in enumerate(sorted({w for _, t, *_ in TRAIN + TEST for w in t.split()}))}


def preprocess(batch: dict) -> dict:
    out = {"row": batch["id"], "input_ids": [[VOCAB[w] for w in text.split()] for text in batch["text"]]}
    if "label" in batch:
        out["labels"] = batch["label"]
    return out


column_names = raw["train"].column_names  # as the example scripts do


def prepare(raw: datasets.DatasetDict) -> datasets.DatasetDict:
    return raw.map(preprocess, batched=True, remove_columns=column_names)


if FIXED:
    # --- fix: start
    def prepare(raw: datasets.DatasetDict) -> datasets.DatasetDict:
        # Each split removes the raw columns it really has (the test split has no label).
        return datasets.DatasetDict(
            {name: split.map(preprocess, batched=True, remove_columns=split.column_names) for name, split in raw.items()}
        )
    # --- fix: end


prepared = prepare(raw)
print(prepared)

# --- check: start
for name, rows in (("train", TRAIN), ("test", TEST)):
    split = prepared[name]
    assert not {"id", "text", "label"} & set(split.column_names), split.column_names
    assert split["row"] == [r[0] for r in rows], (name, split["row"])
    for (_, text, *_labels), ids in zip(rows, split["input_ids"]):
        assert ids == [VOCAB[w] for w in text.split()], (name, text, ids)
    if name == "train":
        assert split["labels"] == [r[2] for r in rows], split["labels"]
print(f"check: {len(TRAIN)} train and {len(TEST)} test rows kept with their ids and labels")
# --- check: end
