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


if FIXED:
    # --- fix: start
    @torch.no_grad()
    def init_weights(module: nn.Module) -> None:
        """The same initialisation with autograd off: it sets values, it is not part of a graph."""
        if isinstance(module, nn.Linear):
            module.weight.normal_(0.0, 0.02)
            module.bias.zero_()

    @torch.no_grad()
    def clip_weights(model: nn.Module, limit: float) -> None:
        """The same clipping with autograd off, like the optimizer's own update."""
        for p in model.parameters():
            p.clamp_(-limit, limit)
    # --- fix: end


torch.manual_seed(0)
print("torch", torch.__version__)
critic = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
w = critic[0].weight
print(f"weight: is_leaf={w.is_leaf} requires_grad={w.requires_grad} grad_enabled={torch.is_grad_enabled()}")

critic.apply(init_weights)
after_init = {name: p.detach().clone() for name, p in critic.named_parameters()}
optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-4)

for step in range(3):
    real, fake = torch.randn(32, 8) + 1.0, torch.randn(32, 8)
    loss = critic(fake).mean() - critic(real).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    clip_weights(critic, 0.01)
    print(f"step {step}: critic loss {loss.item():.5f}")

largest = max(p.abs().max().item() for p in critic.parameters())
print(f"largest |parameter| after clipping: {largest:.4f}")

# --- check: start
assert after_init["0.bias"].eq(0).all() and after_init["2.bias"].eq(0).all()  # zero_() ran
assert 0.01 < after_init["0.weight"].std() < 0.03  # normal_(0, 0.02) replaced the default init
assert all(p.abs().max() <= 0.01 for p in critic.parameters())  # clamp_ ran after the last step
assert not torch.equal(critic[0].weight, after_init["0.weight"])  # the optimizer trained it
print("check: init set N(0, 0.02) weights and zero biases; weights trained and clipped to 0.01")
# --- check: end
