"""Reproducer for hf-cannot-handle-batch-no-padding.

`python repro.py`: a sentiment script classifies a batch of sentences of different lengths
with a GPT-2-style `GPT2ForSequenceClassification`. The tokenizer is given the end-of-text
token as its padding token (so padding itself works), but the model's config keeps
`pad_token_id = None`, as GPT-2's does. The model reads each sequence's logits at its last
non-padding token, which it finds through `config.pad_token_id`; without one it cannot, and
raises `ValueError: Cannot handle batch sizes > 1 if no padding token is defined.`
`python repro.py --fixed`: the model's config is given the tokenizer's padding token id.
The check runs each sentence alone, unpadded, and asserts that its logits in the padded
batch are the same.

Everything is built in the script: a word-level tokenizer and a 2-layer GPT-2 with hidden
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
from transformers import GPT2Config, GPT2ForSequenceClassification, PreTrainedTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["<|endoftext|>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "and"]
SENTENCES = ["the cat sat on the mat", "a dog ran", "the dog ran to the park and sat"]

backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<|endoftext|>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(
    tokenizer_object=backend, eos_token="<|endoftext|>", bos_token="<|endoftext|>"
)
tokenizer.pad_token = tokenizer.eos_token  # the usual first step: padding itself now works

torch.manual_seed(0)
config = GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=32, n_layer=2, n_head=2, num_labels=3)
model = GPT2ForSequenceClassification(config).eval()
print("model.config.pad_token_id:", model.config.pad_token_id)

if FIXED:
    # --- fix: start
    # The model finds each sequence's last real token through config.pad_token_id.
    model.config.pad_token_id = tokenizer.pad_token_id
    # --- fix: end

batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
with torch.no_grad():
    logits = model(**batch).logits
print("batch logits shape:", tuple(logits.shape))

# --- check: start
# Each sentence alone, unpadded, is the reference: its logits in the padded batch are the same.
for i, sentence in enumerate(SENTENCES):
    alone = tokenizer(sentence, return_tensors="pt")
    with torch.no_grad():
        reference = model(**alone).logits[0]
    torch.testing.assert_close(logits[i], reference)
assert logits.shape == (len(SENTENCES), config.num_labels), "a sentence is missing from the batch"
print(f"check: the logits of all {len(SENTENCES)} sentences in the padded batch equal each run alone")
# --- check: end
