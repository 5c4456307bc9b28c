"""Reproducer for cuda-device-side-assert.

`python repro.py`: a language model's embedding table was built for the base vocabulary
(1,000 tokens). The tokenizer then gained two special tokens (ids 1000 and 1001) and the
batch ends every sequence with `<eos>` = 1001, but the embedding was never resized. On the
GPU, `nn.Embedding` runs `index_select`, whose kernel checks each index with
`CUDA_KERNEL_ASSERT(srcIndex < srcSelectDimSize)`. The assert fires on the device (the
kernel prints `Assertion `srcIndex < srcSelectDimSize` failed.`), the CUDA context is
left unusable, and the next call that waits for the GPU raises
`CUDA error: device-side assert triggered` (`torch.AcceleratorError` since torch 2.8,
`RuntimeError` before).
`python repro.py --fixed`: the embedding is resized to the tokenizer's vocabulary (the
old rows are kept, the new ones initialized), the equivalent of
`model.resize_token_embeddings(len(tokenizer))` in transformers, and a cheap host-side
check rejects ids outside the table before they reach the GPU.

Needs a CUDA GPU. The batch has 16 token ids so that `index_select` uses the same kernel
(`indexSelectSmallIndex`) in every release.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
BASE_VOCAB, DIM = 1_000, 32
SPECIAL_TOKENS = {"<pad>": BASE_VOCAB, "<eos>": BASE_VOCAB + 1}  # added to the tokenizer later
TOKENIZER_VOCAB = BASE_VOCAB + len(SPECIAL_TOKENS)

if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")
device = torch.device("cuda")


class TinyLM(torch.nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, DIM)
        self.head = torch.nn.Linear(DIM, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))


# --- fix: start
def resize_token_embeddings(model: TinyLM, new_vocab: int) -> None:
    """Grow the embedding and output layer to the tokenizer's size, keeping trained rows."""
    old = model.embed
    model.embed = torch.nn.Embedding(new_vocab, DIM).to(old.weight.device)
    model.head = torch.nn.Linear(DIM, new_vocab).to(old.weight.device)
    with torch.no_grad():
        model.embed.weight[: old.num_embeddings] = old.weight


def check_ids(ids: torch.Tensor, model: TinyLM) -> None:
    """Fail on the host, with the offending value, before an index reaches a CUDA kernel."""
    top = int(ids.max())
    if top >= model.embed.num_embeddings or int(ids.min()) < 0:
        raise ValueError(f"token id {top} outside the embedding of {model.embed.num_embeddings} rows")
# --- fix: end


torch.manual_seed(0)
model = TinyLM(BASE_VOCAB).to(device)  # built from the base model's config
batch = torch.randint(0, BASE_VOCAB, (2, 8))
batch[:, -1] = SPECIAL_TOKENS["<eos>"]  # the tokenizer appends the new <eos> token
targets = torch.roll(batch, -1, dims=1)

if FIXED:
    resize_token_embeddings(model, TOKENIZER_VOCAB)
    check_ids(batch, model)

ids = batch.to(device)
logits = model(ids)  # the device-side assert fires inside this forward pass
loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
loss.backward()
print(f"loss {loss.item():.4f}")  # .item() waits for the GPU: the error surfaces here
