"""Reproducer for non-full-backward-hook.

`python repro.py`: a saliency tool records the gradient of the loss with respect to a
block's input with a module backward hook, registered with `register_backward_hook`. The
block's forward is two operations (a linear layer, then a ReLU), so the old-style hook
attaches to the last autograd node only: PyTorch warns `Using a non-full backward hook
when the forward contains multiple autograd Nodes is deprecated and will be removed in
future versions. This hook will be missing some grad_input. ...` and the hook's
`grad_input` is the gradient at the ReLU's input (shape (8, 3)), not at the block's input
(shape (8, 6)). The check then fails.
`python repro.py --fixed`: the hook is registered with `register_full_backward_hook`,
whose `grad_input` is the gradient with respect to the module's own inputs; no warning.
The check compares it with `torch.autograd.grad` of the loss with respect to the input.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))  # two autograd nodes: addmm, then relu


block = Block()
head = nn.Linear(3, 1)
recorded = {}


def save_input_gradient(module: nn.Module, grad_input: tuple, grad_output: tuple) -> None:
    recorded["grad_input"] = grad_input[0].detach().clone()


register = block.register_backward_hook
if FIXED:
    # --- fix: start
    # A full backward hook sees the gradients with respect to the module's own inputs.
    register = block.register_full_backward_hook
    # --- fix: end
register(save_input_gradient)

x = torch.randn(8, 6, requires_grad=True)
loss = head(block(x)).pow(2).mean()
loss.backward()
print(f"hook grad_input shape {tuple(recorded['grad_input'].shape)}")

# --- check: start
# Reference: the gradient of the same loss with respect to the block's input, by autograd.
x_ref = x.detach().clone().requires_grad_(True)
(expected,) = torch.autograd.grad(head(block(x_ref)).pow(2).mean(), x_ref)
assert recorded["grad_input"].shape == expected.shape, (recorded["grad_input"].shape, expected.shape)
torch.testing.assert_close(recorded["grad_input"], expected)
print("check: the hook's grad_input equals d loss / d input computed by torch.autograd.grad")
# --- check: end
