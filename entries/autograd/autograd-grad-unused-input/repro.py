"""Reproducer for autograd-grad-unused-input.

`python repro.py`: an adversarial-smoothness loss (as in SMART or virtual adversarial
training) adds a small `noise` tensor to the token embeddings and asks for
d loss / d noise. The evaluation function, however, runs the model from the token ids,
so it rebuilds clean embeddings and the perturbed ones never enter the forward pass:
`noise` is not in the loss's graph, and `torch.autograd.grad` refuses.
`python repro.py --fixed`: the perturbed embeddings are what the model is run on
(`inputs_embeds=`), so the loss depends on `noise`; the check compares its gradient
with central finite differences.
"""

import sys

import torch
import torch.nn as nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)  # float64 so finite differences are exact enough
print("torch", torch.__version__)


class TinyEncoder(nn.Module):
    """Embedding + tanh + linear head; runs from ids or from given embeddings."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.embed(ids)
        return self.head(torch.tanh(inputs_embeds)).mean(dim=1).squeeze(-1)


model = TinyEncoder()
ids = torch.randint(0, 50, (4, 6))
clean_out = model(ids).detach()

embeds = model.embed(ids)
noise = (torch.randn_like(embeds) * 1e-2).requires_grad_()
perturbed = embeds + noise


def evaluate(perturbed_embeds):
    """The forward pass of the perturbed input: here it runs from the ids."""
    return model(ids)


if FIXED:
    # --- fix: start
    def evaluate(perturbed_embeds):
        """Run the model on the perturbed embeddings themselves."""
        return model(inputs_embeds=perturbed_embeds)

    # --- fix: end


def smoothness_loss(n: torch.Tensor) -> torch.Tensor:
    """Squared change of the outputs when `n` is added to the embeddings."""
    return ((evaluate(embeds + n) - clean_out) ** 2).sum()


loss = ((evaluate(perturbed) - clean_out) ** 2).sum()
(noise_grad,) = torch.autograd.grad(loss, noise)
print("d loss / d noise norm", noise_grad.norm().item())

# --- check: start
# Central finite differences of the same loss, one noise element at a time.
fd = torch.zeros_like(noise)
eps = 1e-6
with torch.no_grad():
    base = noise.detach()
    for i in range(base.numel()):
        step = torch.zeros_like(base).view(-1)
        step[i] = eps
        step = step.view_as(base)
        up = smoothness_loss(base + step)
        down = smoothness_loss(base - step)
        fd.view(-1)[i] = (up - down) / (2 * eps)
assert fd.abs().max() > 0, "the loss must depend on the noise"
torch.testing.assert_close(noise_grad, fd, rtol=1e-5, atol=1e-8)
print("check: d loss / d noise equals central finite differences")
# --- check: end
