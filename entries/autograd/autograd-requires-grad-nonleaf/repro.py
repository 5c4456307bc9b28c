"""Reproducer for autograd-requires-grad-nonleaf.

`python repro.py`: a small vocoder-style network uses weight normalisation
(`torch.nn.utils.parametrizations.weight_norm`) on its convolutions. A freezing helper
written for plain layers sets `conv.weight.requires_grad = False`. With weight norm,
`conv.weight` is not a parameter but a tensor computed from `weight_g`/`weight_v`
(stored as `parametrizations.weight.original0/1`) on every access; it has a `grad_fn`,
so it is not a leaf and its `requires_grad` flag cannot be changed.
`python repro.py --fixed`: the helper freezes the module's real parameters with
`module.requires_grad_(False)` (which walks `module.parameters()`), and fine-tuning of the
unfrozen head runs.
"""

import sys

import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


def make_model() -> nn.Sequential:
    return nn.Sequential(
        weight_norm(nn.Conv1d(4, 16, 5, padding=2)),  # pretrained "encoder" to freeze
        nn.LeakyReLU(0.1),
        weight_norm(nn.Conv1d(16, 16, 5, padding=2)),
        nn.LeakyReLU(0.1),
        nn.Conv1d(16, 1, 3, padding=1),  # head to fine-tune
    )


def freeze(encoder: nn.Module) -> None:
    """Freeze helper written for plain layers: touches `.weight` and `.bias` by name."""
    for module in encoder.modules():
        if isinstance(module, nn.Conv1d):
            module.weight.requires_grad = False  # with weight norm: a computed, non-leaf tensor
            module.bias.requires_grad = False


if FIXED:
    # --- fix: start
    def freeze(encoder: nn.Module) -> None:
        """Freeze the leaves autograd owns: every registered parameter, whatever its name."""
        encoder.requires_grad_(False)  # weight_g/weight_v (original0/1) and biases included
    # --- fix: end


model = make_model()
encoder, head = model[:4], model[4]
w = model[0].weight
print(f"model[0].weight: is_leaf={w.is_leaf} grad_fn={type(w.grad_fn).__name__}")
print("parameters of model[0]:", [name for name, _ in model[0].named_parameters()])
encoder_before = {k: v.clone() for k, v in encoder.state_dict().items()}
head_before = {k: v.clone() for k, v in head.state_dict().items()}

freeze(encoder)

trainable = [name for name, p in model.named_parameters() if p.requires_grad]
print("trainable after freezing:", trainable)
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
x, y = torch.randn(8, 4, 32), torch.randn(8, 1, 32)
for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")

# --- check: start
for name, value in encoder.state_dict().items():
    torch.testing.assert_close(value, encoder_before[name])  # frozen: unchanged by training
for name, value in head.state_dict().items():
    assert not torch.equal(value, head_before[name]), name  # the head was fine-tuned
assert all(p.grad is None for p in encoder.parameters())  # no gradient computed for them
assert trainable == ["4.weight", "4.bias"]
print("check: the encoder got no gradients and is unchanged, the head was trained")
# --- check: end
