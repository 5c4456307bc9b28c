"""Reproducer for hf-chat-template-not-set.

A chat fine-tuning script formats its conversations with `tokenizer.apply_chat_template`,
but loads the tokenizer of the base model, whose `tokenizer_config.json` has no
`chat_template` (base checkpoints such as Llama-3.1-8B ship none; their instruct
versions do). Two tiny tokenizers with the same vocabulary are built in the script and
saved as a base and an instruct checkpoint, the instruct one with a ChatML template.

`python repro.py`: `apply_chat_template` raises `ValueError: Cannot use chat template
functions because tokenizer.chat_template is not set and no template argument was
passed! ...` (transformers 5.23.0).
`python repro.py --fixed`: the template the model is trained with is taken from the
instruct tokenizer and set on the base tokenizer (and saved with it).
The check: the rendered prompt equals the ChatML string written out by hand, its token
ids equal those the instruct tokenizer gives, and the template survives a save and reload.
"""

import atexit
import os
import shutil
import sys
import tempfile

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

FIXED = "--fixed" in sys.argv[1:]
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is a tensor?"},
]

work = tempfile.mkdtemp(prefix="repro-chat-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.chdir(work)
words = ["system", "user", "assistant", "You", "are", "terse", "What", "is", "a", "tensor"]
vocab = {token: i for i, token in enumerate(["<unk>", "<|im_start|>", "<|im_end|>", *words])}
vocab.update({".": len(vocab), "?": len(vocab) + 1})
backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Sequence(
    [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
)
special = {"unk_token": "<unk>", "additional_special_tokens": ["<|im_start|>", "<|im_end|>"]}
PreTrainedTokenizerFast(tokenizer_object=backend, **special).save_pretrained("base")
instruct_tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, **special)
instruct_tokenizer.chat_template = CHATML
instruct_tokenizer.save_pretrained("instruct")

# The fine-tuning script: the tokenizer comes with the base model it trains.
tokenizer = AutoTokenizer.from_pretrained("base")
if FIXED:
    # --- fix: start
    # Use the template the model is (or will be) trained with: the instruct release's.
    tokenizer.chat_template = AutoTokenizer.from_pretrained("instruct").chat_template
    tokenizer.save_pretrained("run/tokenizer")  # so every later load has it
    # --- fix: end
prompt = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
print("prompt:", repr(prompt))

# --- check: start
expected = (
    "<|im_start|>system\nYou are terse.<|im_end|>\n"
    "<|im_start|>user\nWhat is a tensor?<|im_end|>\n"
    "<|im_start|>assistant\n"
)
assert prompt == expected, (prompt, expected)
reference = AutoTokenizer.from_pretrained("instruct")
reference_prompt = reference.apply_chat_template(
    MESSAGES, tokenize=False, add_generation_prompt=True
)
assert reference_prompt == expected
assert ids == reference(reference_prompt, add_special_tokens=False)["input_ids"]
assert vocab["<unk>"] not in ids, "a word of the prompt fell out of the vocabulary"
assert ids.count(vocab["<|im_start|>"]) == 3 and ids.count(vocab["<|im_end|>"]) == 2
reloaded = AutoTokenizer.from_pretrained("run/tokenizer")
assert reloaded.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True) == (
    expected
)
print(
    f"check: the prompt equals the ChatML reference and its {len(ids)} ids the instruct tokenizer's"
)
# --- check: end
