"""Reproducer for embedding-index-out-of-range.

`python repro.py`: a small language model is created with an embedding table sized from
its tokenizer's vocabulary (10 ids). Later the tokenizer gets two new special tokens,
`<pad>` and `<sep>` (ids 10 and 11), the way `tokenizer.add_special_tokens(...)` grows a
Hugging Face vocabulary, but the model's `nn.Embedding` keeps 10 rows. The first batch
that contains a new token makes the embedding lookup raise
`IndexError: index out of range in self` on the CPU.
`python repro.py --fixed`: after adding tokens, the embedding table is resized to the new
vocabulary size (old rows copied, new rows initialised), which is what
`model.resize_token_embeddings(len(tokenizer))` does in transformers, and the batch ids
are checked against the table size.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


class Tokenizer:
    def __init__(self, words: list[str]) -> None:
        self.vocab = {word: i for i, word in enumerate(words)}

    def add_special_tokens(self, tokens: list[str]) -> None:
        for token in tokens:
            self.vocab.setdefault(token, len(self.vocab))

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        return [self.vocab[word] for word in text.split()]


class TinyLM(nn.Module):
    def __init__(self, vocab_size: int, dim: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))


tokenizer = Tokenizer(["the", "cat", "dog", "sat", "on", "a", "mat", "ran", "to", "it"])
model = TinyLM(len(tokenizer))  # 10 embedding rows: valid ids 0..9
tokenizer.add_special_tokens(["<pad>", "<sep>"])  # ids 10 and 11, added after the model
print(f"tokenizer: {len(tokenizer)} tokens; embedding rows: {model.embed.num_embeddings}")
trained = copy.deepcopy(model)  # the model as trained on the first 10 tokens

if FIXED:
# --- fix: start
    def resize_token_embeddings(model: TinyLM, new_size: int) -> None:
        """Grow the embedding (and the tied-size output head), keeping trained rows."""
        old = model.embed
        model.embed = nn.Embedding(new_size, old.embedding_dim)
        with torch.no_grad():
            model.embed.weight[: old.num_embeddings] = old.weight
        old_head = model.head
        model.head = nn.Linear(old_head.in_features, new_size)
        with torch.no_grad():
            model.head.weight[: old_head.out_features] = old_head.weight
            model.head.bias[: old_head.out_features] = old_head.bias

    resize_token_embeddings(model, len(tokenizer))
# --- fix: end

sentences = ["the cat sat on a mat <sep> the dog ran", "a dog sat <sep> it ran to the cat"]
batch = [tokenizer.encode(s) for s in sentences]
width = max(len(ids) for ids in batch)
pad_id = tokenizer.vocab["<pad>"]
ids = torch.tensor([seq + [pad_id] * (width - len(seq)) for seq in batch])
print(f"batch ids max {ids.max().item()}, embedding rows {model.embed.num_embeddings}")

logits = model(ids)
loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
print(f"logits {tuple(logits.shape)}, loss {loss.item():.4f}")

# --- check: start
# The trained rows survive: on a batch of old tokens, the model gives the trained model's
# logits for the old vocabulary, and every id of the grown tokenizer has its own row.
old_ids = torch.tensor([tokenizer.encode("the cat sat on a mat"), tokenizer.encode("a dog ran to it on")])
torch.testing.assert_close(model(old_ids)[..., : trained.embed.num_embeddings], trained(old_ids))
assert model.embed.num_embeddings == logits.shape[-1] == len(tokenizer)
print("check: old tokens give the trained logits; every token id has an embedding row")
# --- check: end
