"""Reproducer for ragged-sequence-to-tensor.

`python repro.py`: a DataLoader's `collate_fn` turns a batch of token-id lists into a
tensor with `torch.tensor([...])`. The sentences were tokenized without padding, so the
rows have different lengths and torch cannot build a rectangular tensor:
`ValueError: expected sequence of length 5 at dim 1 (got 3)`.
`python repro.py --fixed`: the collate function pads every row to the batch's longest
with `torch.nn.utils.rnn.pad_sequence` and returns an attention mask (1 for a real token,
0 for padding). The check compares the padded ids and the mask with a batch padded by
hand, and the model's masked mean of the token embeddings with the same mean computed on
each sentence alone, unpadded.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
PAD_ID = 0

# Token ids of six sentences of different lengths (what a tokenizer returns without padding).
sentences = [[5, 9, 2, 7, 3], [4, 8, 6], [1, 2], [7, 7, 7, 7], [3], [6, 5, 4, 3, 2, 1]]


def collate(batch: list) -> dict:
    return {"input_ids": torch.tensor(batch)}  # one row per sentence: ragged rows fail


if FIXED:
# --- fix: start
    from torch.nn.utils.rnn import pad_sequence

    def collate(batch: list) -> dict:
        """Pad the batch's rows to its longest and mark the real tokens in a mask."""
        rows = [torch.tensor(ids) for ids in batch]
        input_ids = pad_sequence(rows, batch_first=True, padding_value=PAD_ID)
        lengths = torch.tensor([len(ids) for ids in batch])
        attention_mask = (torch.arange(input_ids.shape[1]) < lengths[:, None]).long()
        return {"input_ids": input_ids, "attention_mask": attention_mask}
# --- fix: end


embedding = nn.Embedding(10, 4)
loader = DataLoader(sentences, batch_size=3, collate_fn=collate)
batches, pooled = [], []
with torch.no_grad():
    for batch in loader:
        mask = batch["attention_mask"].unsqueeze(-1).float()
        vectors = embedding(batch["input_ids"])
        pooled.append((vectors * mask).sum(1) / mask.sum(1))  # mean over real tokens only
        batches.append(batch)
pooled = torch.cat(pooled)
print(f"{len(batches)} batches, pooled {tuple(pooled.shape)}")

# --- check: start
# Reference 1: each batch padded by hand, and its mask.
for start, batch in zip(range(0, len(sentences), 3), batches):
    rows = sentences[start : start + 3]
    width = max(len(ids) for ids in rows)
    expected_ids = torch.tensor([ids + [PAD_ID] * (width - len(ids)) for ids in rows])
    expected_mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in rows])
    assert torch.equal(batch["input_ids"], expected_ids), (batch["input_ids"], expected_ids)
    assert torch.equal(batch["attention_mask"], expected_mask), batch["attention_mask"]
# Reference 2: every sentence embedded alone, unpadded; padding must change nothing.
with torch.no_grad():
    expected_pooled = torch.stack([embedding(torch.tensor(ids)).mean(0) for ids in sentences])
torch.testing.assert_close(pooled, expected_pooled)
print("check: padded ids and masks equal the hand-padded batches, and the masked mean of every sentence equals its unpadded mean")
# --- check: end
