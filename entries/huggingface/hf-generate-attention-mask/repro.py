"""Reproducer for hf-generate-attention-mask.

`python repro.py`: a batch of two prompts of different lengths is left-padded (the pad
token is the end-of-text token, as for most decoder-only checkpoints) and only the
`input_ids` are passed to `model.generate`. The model's generation config has no
`pad_token_id`, so `generate` logs `The attention mask and the pad token id were not set,
with a batched input. ...`, uses the end-of-text id as the pad id, and then, because pad
and end-of-text are the same id, cannot tell padding from text: it logs `The attention
mask is not set with a batched input, and cannot be inferred from input because pad token
is same as eos token. ...` and attends to the padding. The short prompt's continuation
then differs from what the same model generates for that prompt alone.
`python repro.py --fixed`: the tokenizer's `attention_mask` and `pad_token_id` are passed
to `generate`; no warning is logged. The check generates each prompt on its own, with no
padding, and asserts that every row of the batch continues exactly the same way.

Everything is built in the script: a word-level tokenizer and a 2-layer GPT-2 with hidden
size 32 (weights initialised with a large spread so that attending to padding visibly
changes greedy choices). Nothing is downloaded.
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
NEW_TOKENS = 6

WORDS = [
    "<eos>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "and", "big", "small", "red", "blue",
]
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<eos>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(
    tokenizer_object=backend, eos_token="<eos>", pad_token="<eos>", padding_side="left"
)

torch.manual_seed(0)
config = GPT2Config(
    vocab_size=len(WORDS), n_embd=32, n_layer=2, n_head=2, n_positions=32,
    bos_token_id=0, eos_token_id=0, initializer_range=0.5,
)
model = GPT2LMHeadModel(config).eval()  # generation_config.pad_token_id is None

prompts = ["the big red dog ran to the park and", "a cat"]
batch = tokenizer(prompts, padding=True, return_tensors="pt")  # left-padded, with attention_mask


def alone(prompt: str) -> list[int]:
    """Reference: the prompt generated on its own, no padding involved."""
    encoded = tokenizer(prompt, return_tensors="pt")
    out = model.generate(**encoded, max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    return out[0, encoded["input_ids"].shape[1]:].tolist()


inputs = {"input_ids": batch["input_ids"]}  # the bug: the attention mask is left behind
if FIXED:
    # --- fix: start
    # Pass the attention mask that marks the left padding, and say which id is the pad.
    inputs = {**batch, "pad_token_id": tokenizer.pad_token_id}  # input_ids and attention_mask
    # --- fix: end

with torch.no_grad():
    out = model.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False)
    prompt_len = batch["input_ids"].shape[1]
    continuations = [out[row, prompt_len:].tolist() for row in range(len(prompts))]
    for prompt, batched in zip(prompts, continuations):
        print(f"{prompt!r}: batched {batched}")

    # --- check: start
    for prompt, batched in zip(prompts, continuations):
        reference = alone(prompt)
        assert batched == reference, f"{prompt!r}: batched {batched}, alone {reference}"
    print("check: every batched continuation equals the same prompt generated alone")
    # --- check: end
