"""Reproducer for hf-datasets-arrow-length.

`python repro.py`: a retrieval corpus of 10 documents (`doc_id`, `text`) is split into
passages of 4 words with `Dataset.map(batched=True)`. The function returns 30 rows
(`doc_id` repeated per passage, and `passage`) for the 10 documents, but `map` also keeps
the input columns it was not told to remove, so the written batch holds the returned
30-row columns next to the original 10-row `text`, and Arrow refuses the table:
`pyarrow.lib.ArrowInvalid: Column 1 named text expected length 30 but got length 10`.
`python repro.py --fixed`: the same function, with the input columns removed from the
output (`remove_columns=corpus.column_names`), so every column has 30 rows and the
passage data set is built. The check joins each document's passages back together and
compares them with the document's text.

Everything is in memory; nothing is downloaded or cached.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

from datasets import Dataset, disable_progress_bars  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
WORDS_PER_PASSAGE = 4

disable_progress_bars()
corpus = Dataset.from_dict({
    "doc_id": [f"doc-{i}" for i in range(10)],
    "text": [" ".join(f"w{i}_{j}" for j in range(12)) for i in range(10)],  # 12 words -> 3 passages
})
print(corpus)


def split_into_passages(batch: dict) -> dict:
    """Turns a batch of N documents into M passages (M != N)."""
    out = {"doc_id": [], "passage": []}
    for doc_id, text in zip(batch["doc_id"], batch["text"]):
        words = text.split()
        for start in range(0, len(words), WORDS_PER_PASSAGE):
            out["doc_id"].append(doc_id)  # one copy of the id per passage
            out["passage"].append(" ".join(words[start:start + WORDS_PER_PASSAGE]))
    return out


remove_columns = None  # the bug: map keeps every input column the function does not replace
if FIXED:
    # --- fix: start
    # Drop every input column from the output: only what the function returns is kept,
    # and the function returns all of its columns with the same (new) number of rows.
    remove_columns = corpus.column_names
    # --- fix: end

passages = corpus.map(split_into_passages, batched=True, remove_columns=remove_columns)
print(passages)
print(passages[0])

# --- check: start
# Every document's passages, joined in order, give back its whole text: no word dropped.
for doc_id, text in zip(corpus["doc_id"], corpus["text"]):
    pieces = [p for d, p in zip(passages["doc_id"], passages["passage"]) if d == doc_id]
    assert " ".join(pieces) == text, f"{doc_id}: passages {pieces} do not rebuild {text!r}"
    assert all(len(p.split()) <= WORDS_PER_PASSAGE for p in pieces), f"{doc_id}: a passage is too long"
print(f"check: the {len(passages)} passages rebuild all {len(corpus)} documents word for word")
# --- check: end
