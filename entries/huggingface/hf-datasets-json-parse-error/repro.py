"""Reproducer for hf-datasets-json-parse-error.

`python repro.py`: a preprocessing step writes instruction-tuning examples to
`train.jsonl`, one per line, with `str(example)`: Python's repr, with single quotes,
`None` and `True`. `load_dataset("json", ...)` hands the file to pyarrow's JSON Lines
reader, which stops at the first character of row 0 (`JSON parse error: Missing a name
for object member. in row 0`); datasets' fallback, which tries the file as one JSON
document, fails as well, and the builder raises `DatasetGenerationError` from the
pyarrow error.
`python repro.py --fixed`: the examples are written with `json.dumps`, one JSON object
per line. The check loads the file and compares every row with the examples written.
"""

import json
import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
datasets.disable_progress_bars()

examples = [
    {
        "id": i,
        "instruction": f"Summarise note {i}.",
        "response": "It's short." if i % 3 else "Needs a \"quoted\" reply.",
        "source": None if i % 4 == 0 else "forum",
        "reviewed": i % 2 == 0,
    }
    for i in range(200)
]


def encode(example: dict) -> str:
    return str(example)  # Python repr: {'id': 0, ..., 'source': None, 'reviewed': True}


if FIXED:
    # --- fix: start
    def encode(example: dict) -> str:
        return json.dumps(example, ensure_ascii=False)  # one JSON object per line
    # --- fix: end


with tempfile.TemporaryDirectory(prefix="repro-datasets-json-") as workdir:
    path = os.path.join(workdir, "train.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for example in examples:
            f.write(encode(example) + "\n")
    with open(path, encoding="utf-8") as f:
        print("first line:", f.readline().rstrip())

    train = datasets.load_dataset(
        "json", data_files=path, split="train", cache_dir=os.path.join(workdir, "cache")
    )
    print(train)

    # --- check: start
    assert train.num_rows == len(examples), train.num_rows
    assert train.to_list() == examples, "loaded rows differ from the examples written"
    print(f"check: all {train.num_rows} examples loaded with their values")
    # --- check: end
