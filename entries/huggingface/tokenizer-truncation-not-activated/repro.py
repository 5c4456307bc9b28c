"""Reproducer for tokenizer-truncation-not-activated.

A natural-language-inference script encodes (premise, hypothesis) pairs for a model with
a 12-token context: `tokenizer(premises, hypotheses, max_length=12)`,
without `truncation`. transformers 4.51.3 (with huggingface_hub 0.36.0 and tokenizers
0.21.4, the releases it accepts) is installed apart from the catalog's pins and put first
on `sys.path`: from 5.0 on transformers makes the same choice without the warning.

`python repro.py`: the tokenizer warns `Truncation was not explicitly activated but
`max_length` is provided a specific value, please use `truncation=True` to explicitly
truncate examples to max length. Defaulting to 'longest_first' truncation strategy. ...`
and truncates with `longest_first`, which takes tokens from whichever text is longer, in
turn: once the premise is cut down to the hypothesis' length, the hypothesis loses its
last words too ("... is not working" becomes "... is"), and the check, which compares the ids with
the intended encoding, fails.
`python repro.py --fixed`: `truncation="only_first"`, the strategy the task means: only
the premise is shortened and every hypothesis stays whole. No warning; the check: every
pair's ids equal the reference built from the two texts tokenized separately by the Rust
core, the premise cut to the room the whole hypothesis leaves.

The tokenizer (a word-level vocabulary) is built in the script; nothing is downloaded,
and the run uses the CPU.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name
os.environ["HF_HUB_OFFLINE"] = "1"
PRIVATE = os.path.join(sys.prefix, "failpedia-private")
for release in ("transformers-4.51.3", "huggingface-hub-0.36.0", "tokenizers-0.21.4"):
    sys.path.insert(0, os.path.join(PRIVATE, release))

import transformers  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
CONTEXT = 12
print("transformers", transformers.__version__)

PAIRS = [
    (
        "the printer on the second floor jams whenever someone prints a long report",
        "the printer in the office is not working",
    ),
    ("the portal was slow all morning", "the portal is fast"),
    (
        "after the update the laptop restarts itself every hour and loses unsaved work",
        "the laptop is not stable since the update",
    ),
]
words = sorted({word for pair in PAIRS for text in pair for word in text.split()})
vocab = {"[UNK]": 0, "[PAD]": 1, **{word: i + 2 for i, word in enumerate(words)}}
core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
core.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]")

options = {"max_length": CONTEXT}
if FIXED:
    # --- fix: start
    # Say which text may be cut: the premise; the hypothesis must reach the model whole.
    options["truncation"] = "only_first"
    # --- fix: end

premises, hypotheses = zip(*PAIRS)
encoded = tokenizer(list(premises), list(hypotheses), **options)
for ids in encoded["input_ids"]:
    print(tokenizer.decode(ids))

# --- check: start
# Reference: each text tokenized on its own by the Rust core; the premise keeps only the
# room the whole hypothesis leaves.
for (premise, hypothesis), ids in zip(PAIRS, encoded["input_ids"]):
    premise_ids, hypothesis_ids = core.encode(premise).ids, core.encode(hypothesis).ids
    kept = premise_ids[: CONTEXT - len(hypothesis_ids)]
    expected = kept + hypothesis_ids
    assert ids == expected, f"{hypothesis!r}: got {tokenizer.decode(ids)!r}"
print(f"check: all {len(PAIRS)} pairs fit {CONTEXT} tokens with every hypothesis whole")
# --- check: end
