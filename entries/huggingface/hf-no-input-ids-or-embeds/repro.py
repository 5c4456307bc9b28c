"""Reproducer for hf-no-input-ids-or-embeds.

`python repro.py`: a sentiment classifier is fine-tuned with `Trainer` on a data set of
raw text (`text`, `label`) that was never tokenized. `Trainer` (with the default
`remove_unused_columns=True`) drops `text`, which `BertForSequenceClassification.forward`
does not take, so each batch holds only `labels`; the model is called without
`input_ids` and raises `ValueError: You must specify exactly one of input_ids or
inputs_embeds` (transformers 5.x; 4.x prints `You have to specify either input_ids or
inputs_embeds`).
`python repro.py --fixed`: the text is tokenized with `Dataset.map` (the `text` column
replaced by `input_ids` and `attention_mask`) and batches are padded by
`DataCollatorWithPadding`. The check walks the Trainer's own data loader: every example
reaches the model with the token ids of its own text and its own label, and the loss the
model returns is the cross-entropy against those labels.

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
    default_data_collator,
)

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["[UNK]", "[PAD]", "good", "bad", "great", "awful", "movie", "film", "plot", "acting", "the"]
backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")

raw = Dataset.from_dict({
    "text": ["good movie", "bad film", "great plot", "the acting awful"] * 4,
    "label": [1, 0, 1, 0] * 4,
})
train = raw  # the raw text goes to the Trainer as it is
collator = default_data_collator
if FIXED:
    # --- fix: start
    # Turn the text into the model's inputs, and pad each batch to its longest example.
    train = raw.map(lambda batch: tokenizer(batch["text"]), batched=True, remove_columns=["text"])
    collator = DataCollatorWithPadding(tokenizer)
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
    trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collator)
    result = trainer.train()
    print(f"trained {result.global_step} steps, loss {result.training_loss:.4f}")

    # --- check: start
    # Every example reaches the model as the token ids of its own text, with its own label,
    # and the loss the model returns is the cross-entropy against those labels.
    label_of = {tuple(tokenizer(t)["input_ids"]): lab for t, lab in zip(raw["text"], raw["label"])}
    seen = 0
    for batch in trainer.get_train_dataloader():
        for ids, mask, label in zip(batch["input_ids"], batch["attention_mask"], batch["labels"]):
            key = tuple(ids[mask.bool()].tolist())
            assert key in label_of and 0 not in key, f"ids {key} are not one of the texts"
            assert label.item() == label_of[key], "a wrong label"
            seen += 1
        with torch.no_grad():
            out = model(**batch)
        torch.testing.assert_close(out.loss, torch.nn.functional.cross_entropy(out.logits, batch["labels"]))
    assert seen == len(raw), f"{seen} of {len(raw)} examples reach the model"
    print(f"check: all {seen} examples reach the model as their own token ids and label")
    # --- check: end
