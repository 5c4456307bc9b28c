"""Reproducer for hf-trainer-tokenizer-argument-renamed.

`python repro.py`: a fine-tuning script written for transformers 4.x hands its tokenizer to
the `Trainer` as `tokenizer=tokenizer`. transformers 4.46 renamed the argument to
`processing_class` (the old name warned until 4.57) and 5.0 removed it, so on the pinned
5.23.0 `Trainer.__init__` raises `TypeError: Trainer.__init__() got an unexpected keyword
argument 'tokenizer'` before training starts.
`python repro.py --fixed`: the same tokenizer passed as `processing_class=tokenizer`. The
check confirms the trainer still does everything the tokenizer was passed for: it pads the
rows of unequal length with it (the first step's loss equals the loss of the untrained
model on the batch padded by hand), and `save_model` writes the tokenizer's files beside
the model, byte for byte the files the tokenizer itself saves.

Everything is built in the script (a word-level tokenizer, a one-layer BERT classifier,
4 sentences); nothing is downloaded, and the run uses the CPU.
"""

import copy
import filecmp
import sys
import tempfile
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    PreTrainedTokenizerFast,
    Trainer,
    TrainingArguments,
)

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["[PAD]", "[UNK]", "the", "loss", "went", "down", "up", "run", "crashed", "fine"]
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")

# Sentences of different lengths: a batch of them needs the tokenizer's padding.
texts = ["the loss went down", "the run crashed", "fine", "the loss went up the run crashed"]
labels = [1, 0, 1, 0]
rows = [{**tokenizer(text), "labels": label} for text, label in zip(texts, labels, strict=True)]

torch.manual_seed(0)
config = BertConfig(
    vocab_size=len(WORDS),
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
    pad_token_id=0,
)
model = BertForSequenceClassification(config)
untrained = copy.deepcopy(model)

with tempfile.TemporaryDirectory(prefix="repro-processing-class-") as folder:
    args = TrainingArguments(
        output_dir=str(Path(folder) / "run"),
        max_steps=1,
        per_device_train_batch_size=len(rows),
        learning_rate=1e-3,
        save_strategy="no",
        use_cpu=True,
        report_to="none",
        disable_tqdm=True,
    )
    # The call as a transformers 4.45 script writes it.
    trainer_kwargs = {"tokenizer": tokenizer}
    if FIXED:
        # --- fix: start
        trainer_kwargs = {"processing_class": tokenizer}  # the name since transformers 4.46
        # --- fix: end
    trainer = Trainer(model=model, args=args, train_dataset=rows, **trainer_kwargs)
    result = trainer.train()
    saved, reference = Path(folder) / "saved", Path(folder) / "reference"
    trainer.save_model(str(saved))
    tokenizer.save_pretrained(str(reference))

    # --- check: start
    # The trainer padded the batch with the tokenizer: its first step's loss is the loss of
    # the untrained model on the same 4 rows padded by hand.
    batch = tokenizer.pad([{k: v for k, v in row.items() if k != "labels"} for row in rows], return_tensors="pt")
    with torch.no_grad():
        expected = untrained(**batch, labels=torch.tensor(labels)).loss.item()
    assert abs(result.training_loss - expected) < 1e-5, (result.training_loss, expected)
    # save_model wrote the tokenizer beside the model, the same files the tokenizer saves.
    reference_files = sorted(p.name for p in reference.iterdir())
    assert "tokenizer.json" in reference_files, reference_files
    for name in reference_files:
        assert (saved / name).is_file(), f"save_model did not write {name}"
        assert filecmp.cmp(saved / name, reference / name, shallow=False), f"{name} differs"
    print(f"check: loss {result.training_loss:.6f} == reference {expected:.6f}; tokenizer files {reference_files} saved")
    # --- check: end
