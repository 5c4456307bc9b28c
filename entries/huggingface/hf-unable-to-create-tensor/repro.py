"""Reproducer for hf-unable-to-create-tensor.

`python repro.py`: a token-classification (NER) script tokenizes each sentence without
padding, as the course recipes do, keeps one label per token in a `labels` list, and
batches the examples with `DataCollatorWithPadding`. That collator pads only what the
tokenizer knows how to pad (`input_ids`, `attention_mask`, ...), so the `labels` lists keep
their different lengths and `BatchEncoding.convert_to_tensors` fails with
`ValueError: Unable to create tensor, ... Perhaps your features (`labels` in this case)
have excessive nesting ...`. Passing `padding=True` to the tokenizer, as the message
suggests, would not help: the tokenizer never sees the labels.
`python repro.py --fixed`: `DataCollatorForTokenClassification` pads `labels` too, with
-100 so the padded positions are ignored by the loss, and a tiny BERT token classifier
computes a loss on the batch. The check compares each sentence's labels with its tags,
and the batch's loss with the loss of the sentences run one by one, unpadded.

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
from torch.utils.data import DataLoader  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertForTokenClassification,
    DataCollatorForTokenClassification,
    DataCollatorWithPadding,
    PreTrainedTokenizerFast,
)

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["[UNK]", "[PAD]", "alice", "bob", "lives", "in", "paris", "berlin", "works", "at", "acme"]
LABELS = ["O", "B-PER", "B-LOC", "B-ORG"]

backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")

sentences = [
    ("alice lives in paris", ["B-PER", "O", "O", "B-LOC"]),
    ("bob works at acme in berlin", ["B-PER", "O", "O", "B-ORG", "O", "B-LOC"]),
]
# One example per sentence, unpadded: padding is left to the collator, batch by batch.
features = []
for text, tags in sentences:
    encoded = tokenizer(text)
    encoded["labels"] = [LABELS.index(tag) for tag in tags]
    features.append(dict(encoded))

collator = DataCollatorWithPadding(tokenizer)  # the bug: pads input_ids/attention_mask only
if FIXED:
    # --- fix: start
    # Pads `labels` as well as `input_ids`, with -100 so padded positions are not scored.
    collator = DataCollatorForTokenClassification(tokenizer, label_pad_token_id=-100)
    # --- fix: end

loader = DataLoader(features, batch_size=2, collate_fn=collator)
batch = next(iter(loader))
print({name: tuple(value.shape) for name, value in batch.items()})

torch.manual_seed(0)
config = BertConfig(
    vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=64, max_position_embeddings=16, num_labels=len(LABELS), pad_token_id=1,
)
model = BertForTokenClassification(config).eval()  # no dropout, so the check can compare losses
loss = model(**batch).loss
print(f"loss on the padded batch: {loss.item():.4f}")

# --- check: start
# Each sentence keeps its own tags, and the padded batch's loss equals the loss of the
# sentences run one by one without padding.
total, count = 0.0, 0
for row, feature in enumerate(features):
    kept = batch["labels"][row][batch["labels"][row] != -100].tolist()
    assert kept == feature["labels"], f"sentence {row}: labels {kept}, tags {feature['labels']}"
    alone = {name: torch.tensor([value]) for name, value in feature.items()}
    total += model(**alone).loss * len(feature["labels"])
    count += len(feature["labels"])
torch.testing.assert_close(loss, total / count)
print(f"check: all {count} tags kept, and the padded loss equals the unpadded one")
# --- check: end
