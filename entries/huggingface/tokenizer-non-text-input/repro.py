"""Reproducer for tokenizer-non-text-input.

A CSV of support tickets (`id,text,label`) in which one ticket was filed with an empty
text cell. `load_dataset("csv", ...)` reads that cell as a missing value, `None`, the
same as pandas' `NaN` in a DataFrame.

`python repro.py`: the usual preprocessing, `dataset.map(tokenize, batched=True)`, hands
the batch's `text` list to a fast tokenizer; the Rust core finds `None` where a string
must be and raises `TypeError: TextEncodeInput must be Union[TextInputSequence,
Tuple[InputSequence, InputSequence]]`.
`python repro.py --fixed`: the rows without text are dropped first, by a stated rule (no
text, nothing to classify) and counted, then the same `map` runs. The check: every
ticket that has text is still there, in order, and its token ids equal the ids the
tokenizer's Rust core gives that text read straight from the CSV file, one at a time.

The tokenizer (a word-level vocabulary) and the CSV are built in the script in a
temporary folder; nothing is downloaded, and the run uses the CPU.
"""

import atexit
import csv
import os
import shutil
import sys
import tempfile

work = tempfile.mkdtemp(prefix="repro-tokenizer-non-text-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.environ["HF_HOME"] = os.path.join(work, "hf-home")
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
datasets.disable_progress_bars()

ROWS = [
    ("1", "printer is out of paper", "0"),
    ("2", "cannot log in to the portal", "1"),
    ("3", "", "2"),  # filed with an empty text cell
    ("4", "the portal is slow today", "1"),
    ("5", "paper jam in the printer", "0"),
]
path = os.path.join(work, "tickets.csv")
with open(path, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["id", "text", "label"])
    writer.writerows(ROWS)

words = sorted({word for _, text, _ in ROWS for word in text.split()})
vocab = {"[UNK]": 0, "[PAD]": 1, **{word: i + 2 for i, word in enumerate(words)}}
core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
core.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]")

tickets = datasets.load_dataset("csv", data_files=path, split="train")
print("text column as loaded:", tickets["text"])


def tokenize(batch: dict) -> dict:
    return tokenizer(batch["text"])


if FIXED:
    # --- fix: start
    # Rule: a ticket without text has nothing to classify, so it is dropped (and counted);
    # every other row goes through unchanged.
    before = len(tickets)
    tickets = tickets.filter(lambda row: isinstance(row["text"], str) and row["text"].strip() != "")
    print(f"dropped {before - len(tickets)} row(s) without text")
    # --- fix: end

encoded = tickets.map(tokenize, batched=True)
print("encoded rows:", len(encoded))

# --- check: start
# Reference, independent of datasets: the CSV read with the csv module, and each text
# tokenized on its own by the Rust core.
with open(path, newline="") as handle:
    reference = [row for row in csv.DictReader(handle) if row["text"].strip()]
assert [str(i) for i in encoded["id"]] == [row["id"] for row in reference], encoded["id"]
for row, ids in zip(reference, encoded["input_ids"]):
    assert ids == core.encode(row["text"]).ids, (row, ids)
    assert tokenizer.unk_token_id not in ids, (row, ids)
print(f"check: all {len(reference)} tickets with text kept, token ids equal the reference")
# --- check: end
