"""Reproducer for hf-token-length-warning.

`python repro.py`: a retrieval script embeds a long document with a small BERT encoder
whose position table has 16 rows (`max_position_embeddings=16`, and the tokenizer's
`model_max_length=16`). Nothing truncates the document, so the tokenizer logs `Token
indices sequence length is longer than the specified maximum sequence length for this
model (41 > 16). Running this sequence through the model will result in indexing errors`,
and the forward pass then fails as announced: BERT expands its `token_type_ids` buffer,
which has one column per position, to the 41-token input and raises `RuntimeError: The
expanded size of the tensor (41) must match the existing size (16) at non-singleton
dimension 1.  Target sizes: [1, 41].  Tensor sizes: [1, 16]`.
`python repro.py --fixed`: the document is split into windows of at most
`model_max_length` tokens (truncation with overflow and a stride), so every window fits,
no warning is logged, and the encoder embeds every window. The check removes the overlaps
and compares the windows with the document's full tokenization: no token is lost.

Everything is built in the script: a word-level tokenizer and a 2-layer BERT with hidden
size 32. Nothing is downloaded.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
CONTEXT = 16  # the model's position table: positions 0..15

WORDS = ["[PAD]", "[UNK]", "the", "cat", "sat", "on", "mat", "and", "dog", "ran", "to", "park", "end"]
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(
    tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", model_max_length=CONTEXT
)

torch.manual_seed(0)
config = BertConfig(
    vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=64, max_position_embeddings=CONTEXT, pad_token_id=0,
)
encoder = BertModel(config).eval()

document = " ".join(["the cat sat on the mat and the dog ran to the park"] * 3) + " the end"
print(f"document: {len(document.split())} words; model context: {CONTEXT} positions")

STRIDE = 4  # tokens repeated between consecutive windows, for context
windows = {}  # the bug: the whole document goes in as one sequence
if FIXED:
    # --- fix: start
    # Split the long text into overlapping windows that each fit the model's context.
    windows = dict(
        truncation=True,
        max_length=tokenizer.model_max_length,
        stride=STRIDE,
        return_overflowing_tokens=True,
        padding=True,
    )
    # --- fix: end

encoded = tokenizer(document, return_tensors="pt", **windows)
encoded.pop("overflow_to_sample_mapping", None)
print("input_ids shape:", tuple(encoded["input_ids"].shape))

with torch.no_grad():
    hidden = encoder(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"]).last_hidden_state
print("hidden states shape:", tuple(hidden.shape))

# --- check: start
# Every token of the document reaches the model: the windows, overlaps removed, rebuild
# the document's full tokenization.
rows = [ids[mask.bool()].tolist() for ids, mask in zip(encoded["input_ids"], encoded["attention_mask"])]
rebuilt = rows[0] + [token for row in rows[1:] for token in row[STRIDE:]]
assert rebuilt == backend.encode(document).ids, "the windows do not cover the document"
assert hidden.shape[:2] == encoded["input_ids"].shape, "not every window was encoded"
print(f"check: {len(rows)} windows of at most {CONTEXT} tokens cover all {len(rebuilt)} tokens of the document")
# --- check: end
