"""Reproducer for tokenizers-fork-after-parallelism.

`python repro.py`: a fast tokenizer (a WordLevel model built in memory, no download)
tokenizes the corpus once in the main process with `encode_batch`, which runs on the
tokenizers thread pool, to count tokens before training. Then a DataLoader with two worker
processes started by `fork` tokenizes each batch in its `collate_fn`. Each worker is a fork
of a process whose tokenizer thread pool has already run, so tokenizers 0.8.1 to 0.22.1
(0.22.1 here, installed apart: reproducer.private_requirements) print `huggingface/tokenizers:
The current process just got forked, after parallelism has already been used. Disabling
parallelism to avoid deadlocks...` in every worker, and turn parallelism off there.
`python repro.py --fixed`: `TOKENIZERS_PARALLELISM=false` is set before the tokenizer is
first used, so the main process and the workers all tokenize on one thread each (the
DataLoader workers are the parallelism), the choice is made, and nothing is left for a fork
to find.
The check asserts that the batches the workers produced cover every sample once and hold
the token ids that tokenizing each sentence alone in the main process gives.
"""

import os
import sys

# tokenizers 0.22.1, the last release that prints the warning (0.22.2 removed the message
# and kept the behaviour); installed apart, in this folder under the prefix.
sys.path.insert(0, os.path.join(sys.prefix, "failpedia-private", "tokenizers-0.22.1"))

FIXED = "--fixed" in sys.argv[1:]

if FIXED:
    # --- fix: start
    # Decide before the first use: one thread per process, the DataLoader workers being
    # the parallelism. (Set in the shell instead: export TOKENIZERS_PARALLELISM=false.)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    # --- fix: end

import tokenizers  # noqa: E402
import torch  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402
from tokenizers.pre_tokenizers import Whitespace  # noqa: E402

WORDS = [
    "the",
    "a",
    "model",
    "loss",
    "grad",
    "step",
    "batch",
    "token",
    "rank",
    "worker",
    "data",
    "fork",
    "thread",
    "pool",
]
vocab = {"[UNK]": 0, "[PAD]": 1, **{word: index + 2 for index, word in enumerate(WORDS)}}
tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
tokenizer.pre_tokenizer = Whitespace()

corpus = [
    " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(3 + i % 5)) + " unknownword"
    for i in range(64)
]

# Before training: count the tokens of the corpus on the tokenizer's thread pool.
total_tokens = sum(len(encoding.ids) for encoding in tokenizer.encode_batch(corpus))
print(
    f"tokenizers {tokenizers.__version__}: corpus of {len(corpus)} sentences, {total_tokens} tokens"
)


def collate(batch: list[tuple[int, str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokenize a batch in the worker and pad it to its longest sentence."""
    indices = torch.tensor([index for index, _ in batch])
    encodings = tokenizer.encode_batch([text for _, text in batch])
    longest = max(len(encoding.ids) for encoding in encodings)
    ids = torch.full((len(batch), longest), vocab["[PAD]"])
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = torch.tensor(encoding.ids)
    return indices, ids


loader = torch.utils.data.DataLoader(
    list(enumerate(corpus)),
    batch_size=8,
    num_workers=2,
    multiprocessing_context="fork",
    collate_fn=collate,
)
batches = list(loader)
print(f"{len(batches)} batches tokenized by {loader.num_workers} workers")

# --- check: start
seen = torch.cat([indices for indices, _ in batches]).tolist()
assert sorted(seen) == list(range(len(corpus))), "a sample was dropped or repeated"
for indices, ids in batches:
    for index, row in zip(indices.tolist(), ids):
        expected = tokenizer.encode(corpus[index]).ids  # one sentence, no batch, no worker
        assert row[: len(expected)].tolist() == expected, (index, row, expected)
        assert (row[len(expected) :] == vocab["[PAD]"]).all(), (index, row)
assert sum((ids != vocab["[PAD]"]).sum().item() for _, ids in batches) == total_tokens
print("check: every sample tokenized once, ids equal tokenizing each sentence alone")
# --- check: end
