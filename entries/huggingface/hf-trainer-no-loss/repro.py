"""Reproducer for hf-trainer-no-loss.

`python repro.py`: a sentiment classifier is fine-tuned with `Trainer` on a data set whose
target column is called `sentiment`. `BertForSequenceClassification.forward` has no
`sentiment` argument, so `Trainer` (with the default `remove_unused_columns=True`) drops
the column, the model receives only `input_ids` and `attention_mask`, returns `logits`
without a loss, and `Trainer.compute_loss` raises `ValueError: The model did not return a
loss from the inputs, only the following keys: logits. For reference, the inputs it
received are input_ids,attention_mask.`
`python repro.py --fixed`: the target column is renamed to `labels`, the name the model's
`forward` takes, so it reaches the model, which computes the loss, and two training steps
run. The check walks the Trainer's own data loader: every example arrives with its
sentiment as `labels`, and the model's loss is the cross-entropy against them.

Everything is built in the script: a word-level tokenizer, a 2-layer BERT with hidden
size 32 and an in-memory data set. Nothing is downloaded; the run uses the CPU.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertForSequenceClassification,
    DataCollatorWithPadding,
    PreTrainedTokenizerFast,
    Trainer,
    TrainingArguments,
)

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["[UNK]", "[PAD]", "good", "bad", "great", "awful", "movie", "film", "plot", "acting"]
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")

raw = Dataset.from_dict({
    "text": ["good movie", "bad film", "great plot", "awful acting"] * 4,
    "sentiment": [1, 0, 1, 0] * 4,
})
train = raw.map(lambda batch: tokenizer(batch["text"]), batched=True, remove_columns=["text"])

if FIXED:
    # --- fix: start
    # The model's forward takes `labels`; any other name is dropped before the batch is built.
    train = train.rename_column("sentiment", "labels")
    # --- fix: end
print("columns:", train.column_names)

torch.manual_seed(0)
model = BertForSequenceClassification(BertConfig(
    vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=64, max_position_embeddings=16, num_labels=2, pad_token_id=1,
))

with tempfile.TemporaryDirectory(prefix="repro-trainer-") as output_dir:
    args = TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=4,
        max_steps=2,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=DataCollatorWithPadding(tokenizer))
    result = trainer.train()
    print(f"trained {result.global_step} steps, loss {result.training_loss:.4f}")

    # --- check: start
    # Every example reaches the model with its own sentiment as `labels`, and the loss the
    # model returns is the cross-entropy of its logits against them.
    sentiment_of = {tuple(tokenizer(t)["input_ids"]): s for t, s in zip(raw["text"], raw["sentiment"])}
    seen = 0
    for batch in trainer.get_train_dataloader():
        for ids, mask, label in zip(batch["input_ids"], batch["attention_mask"], batch["labels"]):
            assert label.item() == sentiment_of[tuple(ids[mask.bool()].tolist())], "a wrong label"
            seen += 1
        with torch.no_grad():
            out = model(**batch)
        torch.testing.assert_close(out.loss, torch.nn.functional.cross_entropy(out.logits, batch["labels"]))
    assert seen == len(raw), f"{seen} of {len(raw)} examples reach the model"
    print(f"check: all {seen} examples reach the model with their sentiment as labels, and the loss uses them")
    # --- check: end
