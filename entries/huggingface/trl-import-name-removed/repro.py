"""Reproducer for trl-import-name-removed.

`python repro.py`: a supervised fine-tuning script written for trl 0.7 to 0.19 trains on
the answers only: it formats each example as one text ("question: ... answer: ...") and
passes `DataCollatorForCompletionOnlyLM("answer :", tokenizer=tokenizer)`, which sets the
labels of every token up to the end of the response template to -100. trl 0.17 deprecated
the collator and 0.20.0 removed it, so on trl 1.16.0 the import fails: `ImportError:
cannot import name 'DataCollatorForCompletionOnlyLM' from 'trl' (.../trl/__init__.py)`.
`python repro.py --fixed`: what trl's deprecation message and documentation point to, a
prompt-completion dataset (`prompt` ends with the response template, `completion` is the
answer) with `completion_only_loss=True` in `SFTConfig`. The check records the labels the
model receives in every training step and asserts that each row has -100 on exactly its
prompt tokens (and padding) and the token ids on its completion tokens, against a mask
built from the lengths the tokenizer gives the prompt and the completion on their own;
every example is trained on once, with a finite loss.

Everything is built in the script (a word-level tokenizer, a 2-layer GPT-2 from a config,
four question/answer pairs); nothing is downloaded, and the run uses the CPU.
"""

import math
import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

RESPONSE_TEMPLATE = "answer :"

# Prompts of different lengths, so a mask cut at the wrong place shows.
pairs = [
    ("what is the colour of the sky", "blue"),
    ("what is the colour of grass", "it is green"),
    ("the colour of snow", "white"),
    ("what is the colour of the night", "it is very dark black"),
]
prompts = [f"question : {q} {RESPONSE_TEMPLATE}" for q, _ in pairs]
completions = [f" {a}" for _, a in pairs]


# A word-level vocabulary of exactly these words, with end-of-text and padding.
WORDS = ["<eos>", "<pad>", *sorted({w for text in prompts + completions for w in text.split()})]
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<eos>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(
    tokenizer_object=backend, eos_token="<eos>", pad_token="<pad>", unk_token="<eos>"
)


def completion_only_collator(tokenizer):
    """How scripts for trl 0.7 to 0.19 masked the prompt: the completion-only collator."""
    from trl import DataCollatorForCompletionOnlyLM

    return DataCollatorForCompletionOnlyLM(RESPONSE_TEMPLATE, tokenizer=tokenizer)


# The old script: one text column, and the collator finds the response template in it.
train_dataset = Dataset.from_dict({"text": [p + c for p, c in zip(prompts, completions)]})
loss_settings = {}
make_collator = completion_only_collator
if FIXED:
    # --- fix: start
    # trl 0.20 and later: a prompt-completion dataset, and the loss on the completion only.
    train_dataset = Dataset.from_dict({"prompt": prompts, "completion": completions})
    loss_settings = {"completion_only_loss": True}

    def make_collator(tokenizer):
        return None  # SFTTrainer's own collator

    # --- fix: end

torch.manual_seed(0)
model = GPT2LMHeadModel(
    GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=2, n_head=2)
)
seen = []  # (input_ids, attention_mask, labels) of every batch the model trains on


def record_batch(module, args, kwargs):
    if module.training:
        seen.append((kwargs["input_ids"], kwargs["attention_mask"], kwargs["labels"]))


model.register_forward_pre_hook(record_batch, with_kwargs=True)

with tempfile.TemporaryDirectory(prefix="repro-sft-") as output_dir:
    args = SFTConfig(
        output_dir=output_dir,
        num_train_epochs=1,
        per_device_train_batch_size=2,
        learning_rate=1e-3,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        **loss_settings,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        processing_class=tokenizer,
        data_collator=make_collator(tokenizer),
    )
    result = trainer.train()
    print("steps:", trainer.state.global_step, "training loss:", result.training_loss)

    # --- check: start
    # The reference, from token lengths alone: each prompt and completion tokenized on its
    # own; the sequence is prompt + completion + end-of-text, and the labels are -100 on the
    # prompt's tokens and the token ids on the completion's (and on the end-of-text token).
    eos = tokenizer.eos_token_id
    expected = {}
    for prompt, completion in zip(prompts, completions):
        prompt_ids = tokenizer(prompt)["input_ids"]
        completion_ids = tokenizer(completion)["input_ids"] + [eos]
        n_prompt, n_completion = len(prompt_ids), len(completion_ids)
        ids = tuple(prompt_ids + completion_ids)
        expected[ids] = [-100] * n_prompt + list(ids[n_prompt : n_prompt + n_completion])
        assert n_prompt > 0 and n_completion > 1, (prompt, completion)
        assert eos not in ids[:-1], f"a word is missing from the vocabulary: {ids}"
    trained_on = []
    for input_ids, attention_mask, labels in seen:
        for row_ids, row_mask, row_labels in zip(input_ids, attention_mask, labels):
            length = int(row_mask.sum())
            ids = tuple(row_ids[:length].tolist())
            assert ids in expected, f"trained on a sequence no example gives: {ids}"
            got = row_labels[:length].tolist()
            assert got == expected[ids], f"labels {got}, expected {expected[ids]}"
            assert (row_labels[length:] == -100).all(), f"padding not masked: {row_labels.tolist()}"
            trained_on.append(ids)
    # Every example was trained on exactly once (one epoch), and the loss is finite.
    assert sorted(trained_on) == sorted(expected), f"examples trained on: {len(trained_on)}"
    assert trainer.state.global_step == 2, trainer.state.global_step
    assert math.isfinite(result.training_loss), result.training_loss
    masked = sum(label == -100 for labels in expected.values() for label in labels)
    print(f"check: {len(expected)} examples, {masked} prompt tokens masked with -100 and every")
    print("completion token kept, as the token lengths of prompt and completion give")
    # --- check: end
