"""Reproducer for checkpoint-no-input-requires-grad.

`python repro.py`: a small language-model-like network fine-tuned as with PEFT/LoRA: the
embedding is frozen, the middle block (the part being trained) runs under
`torch.utils.checkpoint.checkpoint(..., use_reentrant=True)`, and a trainable head follows.
The block's input comes from the frozen embedding, so it does not require grad;
reentrant checkpointing warns `None of the inputs have requires_grad=True. Gradients will
be None` and returns an output cut off from the block's parameters. The loss still has a
`grad_fn` (through the head), backward runs, and the block's weights get no gradient.
`python repro.py --fixed`: the block is checkpointed with `use_reentrant=False`, and its
gradients equal those of the same network run without checkpointing.
"""

import copy
import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

vocab, width, classes = 50, 16, 4
embed = nn.Embedding(vocab, width)
embed.requires_grad_(False)  # the frozen base model's embedding
block = nn.Sequential(nn.Linear(width, 32), nn.GELU(), nn.Linear(32, width))  # trained
head = nn.Linear(width, classes)  # trained too, so the loss keeps a grad_fn
tokens = torch.randint(0, vocab, (8, 12))
labels = torch.randint(0, classes, (8,))
reference_block, reference_head = copy.deepcopy(block), copy.deepcopy(head)


def forward(tokens: torch.Tensor) -> torch.Tensor:
    hidden = embed(tokens)  # requires_grad=False: the embedding is frozen
    hidden = checkpoint(block, hidden, use_reentrant=True)
    return head(hidden.mean(dim=1))


if FIXED:
# --- fix: start
    def forward(tokens: torch.Tensor) -> torch.Tensor:
        """Non-reentrant checkpointing keeps the block's parameters in the graph."""
        hidden = embed(tokens)
        hidden = checkpoint(block, hidden, use_reentrant=False)
        return head(hidden.mean(dim=1))
# --- fix: end

loss = nn.functional.cross_entropy(forward(tokens), labels)
loss.backward()
print(f"loss {loss.item():.4f}; block grads: {[p.grad is not None for p in block.parameters()]}")

# --- check: start
# Reference: the same network and batch without checkpointing (checkpointing must only
# trade compute for memory, never change the gradients).
reference_loss = nn.functional.cross_entropy(
    reference_head(reference_block(embed(tokens)).mean(dim=1)), labels
)
reference_loss.backward()
for (name, param), reference in zip(block.named_parameters(), reference_block.parameters()):
    assert param.grad is not None, f"block.{name} got no gradient: it would never train"
    torch.testing.assert_close(param.grad, reference.grad)
for param, reference in zip(head.parameters(), reference_head.parameters()):
    torch.testing.assert_close(param.grad, reference.grad)
print("check: every block and head gradient equals the one computed without checkpointing")
# --- check: end
