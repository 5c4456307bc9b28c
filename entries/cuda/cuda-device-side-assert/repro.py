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
`python repro.py --fixed`: the embedding and the output layer are resized to the
tokenizer's vocabulary (the trained rows are copied, the new ones initialized), the
equivalent of `model.resize_token_embeddings(len(tokenizer))` in transformers, and a
cheap host-side check rejects ids outside the table before they reach the GPU. The check
compares the resized model with a copy of the trained one: every trained row of the
embedding and the output layer is unchanged, and the logits of the old tokens over the old
vocabulary equal the trained model's.

Needs a CUDA GPU. The batch has 16 token ids so that `index_select` uses the same kernel
(`indexSelectSmallIndex`) in every release.
"""

import copy
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


torch.manual_seed(0)
model = TinyLM(BASE_VOCAB).to(device)  # the trained model, built from the base model's config
trained = copy.deepcopy(model)  # its weights as trained, to check the resize against
with torch.no_grad():  # it ran before the tokenizer changed (this also sets up cuBLAS)
    model(torch.arange(16, device=device).view(2, 8))
batch = torch.randint(0, BASE_VOCAB, (2, 8))
batch[:, -1] = SPECIAL_TOKENS["<eos>"]  # the tokenizer appends the new <eos> token
targets = torch.roll(batch, -1, dims=1)

if FIXED:
    # --- fix: start
    # Grow the embedding and the output layer to the tokenizer's vocabulary, copying the
    # trained rows; only the new tokens' rows start from fresh initial values.
    # (transformers: model.resize_token_embeddings(len(tokenizer)))
    old_embed, old_head = model.embed, model.head
    kept = old_embed.num_embeddings
    model.embed = torch.nn.Embedding(TOKENIZER_VOCAB, DIM, device=device)
    model.head = torch.nn.Linear(DIM, TOKENIZER_VOCAB, device=device)
    with torch.no_grad():
        model.embed.weight[:kept] = old_embed.weight
        model.head.weight[:kept] = old_head.weight
        model.head.bias[:kept] = old_head.bias
    # Refuse out-of-range ids on the host, with the value, before they reach a kernel.
    if batch.min() < 0 or batch.max() >= model.embed.num_embeddings:
        raise ValueError(f"token ids {batch.min()}..{batch.max()} outside {model.embed.num_embeddings} embedding rows")
    # --- fix: end

ids = batch.to(device)
logits = model(ids)  # the device-side assert fires inside this forward pass
loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
loss.backward()
print(f"loss {loss.item():.4f}")  # .item() waits for the GPU: the error surfaces here

# --- check: start
rows = trained.embed.num_embeddings
torch.testing.assert_close(model.embed.weight[:rows], trained.embed.weight)
torch.testing.assert_close(model.head.weight[:rows], trained.head.weight)
torch.testing.assert_close(model.head.bias[:rows], trained.head.bias)
old_tokens = ids < rows  # positions holding tokens the trained model knew
torch.testing.assert_close(logits[old_tokens][:, :rows], trained(ids[old_tokens]))
print(f"check: the resized model keeps all {rows} trained rows and scores old tokens as before")
# --- check: end
