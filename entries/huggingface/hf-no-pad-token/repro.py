"""Reproducer for hf-no-pad-token.

`python repro.py`: a causal-LM fine-tuning script tokenizes a batch of sentences of
different lengths with `padding=True`. The tokenizer is built like GPT-2's (and Llama's,
Mistral's, Falcon's ...): it has an end-of-text token but no padding token, so
`PreTrainedTokenizerBase._get_padding_truncation_strategies` raises
`ValueError: Asking to pad but the tokenizer does not have a padding token.`
`python repro.py --fixed`: the end-of-text token is reused as the padding token, the batch
is padded, the padded positions are excluded from the loss with `-100` (chosen from the
attention mask, not from the token id, so real end-of-text tokens keep their labels), and
a tiny GPT-2 computes a loss on the batch. The check computes the loss of each sentence
alone, unpadded, and asserts the padded batch's loss is the same.

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
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["<|endoftext|>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "and"]


def gpt2_like_tokenizer() -> PreTrainedTokenizerFast:
    """Word-level tokenizer with an end-of-text token and, like GPT-2's, no pad token."""
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<|endoftext|>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        model_max_length=32,
    )


tokenizer = gpt2_like_tokenizer()
print(f"pad_token={tokenizer.pad_token!r} eos_token={tokenizer.eos_token!r}")
if FIXED:
    # --- fix: start
    # Reuse the end-of-text token for padding: no new embedding row, nothing to resize.
    # The attention mask hides padded positions from the model; the loss must skip them
    # too (labels below are chosen from the attention mask, not from the token id).
    tokenizer.pad_token = tokenizer.eos_token
    # --- fix: end

texts = [
    "the cat sat on the mat <|endoftext|>",
    "a dog ran to the park and the cat sat <|endoftext|>",
]
batch = tokenizer(texts, padding=True, return_tensors="pt")
print("padded batch shape:", tuple(batch["input_ids"].shape))

# Causal-LM labels: ignore padded positions. Choose them from the attention mask, not with
# `labels == pad_token_id`, which would also hide the real <|endoftext|> tokens.
labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)

torch.manual_seed(0)
config = GPT2Config(
    vocab_size=len(WORDS), n_embd=32, n_layer=2, n_head=2, n_positions=32, bos_token_id=0, eos_token_id=0
)
config.pad_token_id = tokenizer.pad_token_id
model = GPT2LMHeadModel(config).eval()  # no dropout, so the check can compare losses
loss = model(**batch, labels=labels).loss
print(f"loss on the padded batch: {loss.item():.4f}")

# --- check: start
# The same loss, sentence by sentence without padding: padding must change nothing.
total, count = 0.0, 0
for text in texts:
    alone = tokenizer(text, return_tensors="pt")
    predicted = alone["input_ids"].shape[1] - 1  # every token but the first, <|endoftext|> included
    total += model(**alone, labels=alone["input_ids"]).loss * predicted
    count += predicted
torch.testing.assert_close(loss, total / count)
print(f"check: the padded batch's loss equals the unpadded loss over all {count} predicted tokens")
# --- check: end
