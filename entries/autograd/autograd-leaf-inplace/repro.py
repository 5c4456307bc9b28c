"""Reproducer for autograd-leaf-inplace.

`python repro.py`: a WGAN-style critic is initialised with tensor methods
(`weight.normal_()`, `bias.zero_()`) and clipped after each optimizer step with
`p.clamp_()`, all with grad mode on. The parameters are leaves that require grad, so
autograd's in-place check refuses the first of these calls.
`python repro.py --fixed`: the same initialisation and clipping run under
`torch.no_grad()`, so they edit the values without being recorded, and training runs.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]


def init_weights(module: nn.Module) -> None:
    """DCGAN-style initialisation written with in-place tensor methods."""
    if isinstance(module, nn.Linear):
        module.weight.normal_(0.0, 0.02)
        module.bias.zero_()


def clip_weights(model: nn.Module, limit: float) -> None:
    """WGAN weight clipping after each optimizer step."""
    for p in model.parameters():
        p.clamp_(-limit, limit)


# --- fix: start
@torch.no_grad()
def init_weights_no_grad(module: nn.Module) -> None:
    """The same initialisation with autograd off: it sets values, it is not part of a graph."""
    if isinstance(module, nn.Linear):
        module.weight.normal_(0.0, 0.02)
        module.bias.zero_()


@torch.no_grad()
def clip_weights_no_grad(model: nn.Module, limit: float) -> None:
    """The same clipping with autograd off, like the optimizer's own update."""
    for p in model.parameters():
        p.clamp_(-limit, limit)
# --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__)
critic = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
w = critic[0].weight
print(f"weight: is_leaf={w.is_leaf} requires_grad={w.requires_grad} grad_enabled={torch.is_grad_enabled()}")

critic.apply(init_weights_no_grad if FIXED else init_weights)
clip = clip_weights_no_grad if FIXED else clip_weights
optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-4)

for step in range(3):
    real, fake = torch.randn(32, 8) + 1.0, torch.randn(32, 8)
    loss = critic(fake).mean() - critic(real).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    clip(critic, 0.01)
    print(f"step {step}: critic loss {loss.item():.5f}")

largest = max(p.abs().max().item() for p in critic.parameters())
print(f"largest |parameter| after clipping: {largest:.4f}")
