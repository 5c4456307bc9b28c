"""Reproducer for checkpoint-recompute-metadata-mismatch.

A decoder layer with a key/value cache, as Hugging Face models have, trained with
non-reentrant activation checkpointing (`use_reentrant=False`) while the cache is still on
(`use_cache=True`): the layer appends this step's keys and values to the cache object it is
given and attends over everything the cache holds.

`python repro.py`: the forward appends 6 positions to the empty cache and saves keys of
6 positions for backward. In backward, checkpointing runs the layer again to recompute
them, with the same cache object, which now already holds those 6 positions: the
recomputation attends over 12, its saved tensors have other shapes, and torch raises
`CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors
have different metadata than during the forward pass.`
`python repro.py --fixed`: training runs without the cache (`use_cache=False`, what
Transformers switches to when gradient checkpointing is on), so forward and recompute
compute the same thing.
The check: the loss and every parameter's gradient equal those of the same model run
without checkpointing.
"""

import sys

import torch
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv[1:]


class KVCache:
    """Keys and values of the positions seen so far, grown by each call (like DynamicCache)."""

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.keys is not None and self.values is not None:
            k, v = torch.cat([self.keys, k], dim=1), torch.cat([self.values, v], dim=1)
        self.keys, self.values = k, v
        return k, v


class DecoderLayer(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.q = torch.nn.Linear(width, width)
        self.k = torch.nn.Linear(width, width)
        self.v = torch.nn.Linear(width, width)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width)
        )

    def forward(self, x: torch.Tensor, cache: KVCache | None) -> torch.Tensor:
        q, k, v = self.q(x), self.k(x), self.v(x)
        if cache is not None:
            k, v = cache.update(k, v)
        attention = torch.softmax(q @ k.transpose(1, 2) / k.shape[-1] ** 0.5, dim=-1)
        h = x + attention @ v
        return h + self.mlp(h)


def build() -> torch.nn.ModuleList:
    torch.manual_seed(0)
    return torch.nn.ModuleList(DecoderLayer(16) for _ in range(2))


def loss_of(
    layers: torch.nn.ModuleList, x: torch.Tensor, use_cache: bool, checkpointed: bool
) -> torch.Tensor:
    caches = [KVCache() if use_cache else None for _ in layers]
    h = x
    for layer, cache in zip(layers, caches):
        h = checkpoint(layer, h, cache, use_reentrant=False) if checkpointed else layer(h, cache)
    return h.pow(2).mean()


x = torch.randn(4, 6, 16, generator=torch.Generator().manual_seed(1))
use_cache = True  # the model's default, left on for training
if FIXED:
    # --- fix: start
    # Train without the key/value cache: it is for generation, and checkpointing's
    # recomputation would see the positions the forward already appended.
    use_cache = False
    # --- fix: end

layers = build()
loss = loss_of(layers, x, use_cache=use_cache, checkpointed=True)
loss.backward()
grads = {name: p.grad.clone() for name, p in layers.named_parameters()}
print(f"checkpointed training step: loss {loss.item():.6f}, {len(grads)} gradients")

# --- check: start
reference_layers = build()
reference_loss = loss_of(reference_layers, x, use_cache=False, checkpointed=False)
reference_loss.backward()
torch.testing.assert_close(loss, reference_loss, rtol=0, atol=0)
for name, p in reference_layers.named_parameters():
    assert p.grad is not None and p.grad.abs().sum() > 0, name
    torch.testing.assert_close(grads[name], p.grad)
print(f"check: loss and all {len(grads)} gradients equal those of the model without checkpointing")
# --- check: end
