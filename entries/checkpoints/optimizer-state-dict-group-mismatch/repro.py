"""Reproducer for optimizer-state-dict-group-mismatch.

A fine-tuning run freezes the backbone and builds Adam over the trainable parameters only
(the head's weight and bias: one group of 2 tensors), trains a few steps and saves the
model and optimizer state. `python repro.py`: the resume code builds Adam over
`model.parameters()` (4 tensors), and `optimizer.load_state_dict` refuses the saved group
of 2 with `ValueError: loaded state dict contains a parameter group that doesn't match the
size of optimizer's group`. `python repro.py --fixed`: the resume code builds the optimizer
over the same parameters, in the same order, as the run that saved it, so the saved Adam
moments load onto the right tensors and training continues where it stopped.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.backbone(x)))


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, step: int) -> None:
    generator = torch.Generator().manual_seed(step)
    x = torch.randn(32, 8, generator=generator)
    y = torch.randint(0, 3, (32,), generator=generator)
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


# The run that saved the checkpoint: backbone frozen, Adam over the head only.
torch.manual_seed(0)
model = Classifier()
model.backbone.requires_grad_(False)
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
for step in range(5):
    train_step(model, optimizer, step)
folder = tempfile.mkdtemp()
path = os.path.join(folder, "checkpoint.pt")
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)

# What that run would have computed next without stopping: the reference for the check.
saved_moments = {
    name: {key: value.clone() for key, value in optimizer.state[p].items()}
    for name, p in model.named_parameters()
    if p in optimizer.state
}
train_step(model, optimizer, 5)
uninterrupted = {name: p.detach().clone() for name, p in model.named_parameters()}

# The resume.
checkpoint = torch.load(path)
resumed = Classifier()
resumed.load_state_dict(checkpoint["model"])
params = list(resumed.parameters())  # every parameter: 4 tensors against a saved group of 2
if FIXED:
# --- fix: start
    # Build the optimizer over the same parameters, in the same order, as the run that
    # saved it: the backbone frozen, the head's weight and bias trained.
    resumed.backbone.requires_grad_(False)
    params = [p for p in resumed.parameters() if p.requires_grad]
# --- fix: end
resumed_optimizer = torch.optim.Adam(params, lr=1e-2)
print(f"saved group: {len(checkpoint['optimizer']['param_groups'][0]['params'])} tensors, "
      f"new group: {len(params)} tensors")
resumed_optimizer.load_state_dict(checkpoint["optimizer"])
loaded_moments = {
    name: {key: value.clone() for key, value in resumed_optimizer.state[p].items()}
    for name, p in resumed.named_parameters()
    if p in resumed_optimizer.state
}
train_step(resumed, resumed_optimizer, 5)
print("resumed and trained one more step")

# --- check: start
# Every saved Adam state (step, exp_avg, exp_avg_sq) landed on the parameter it belongs to,
# and the next step matches the run that never stopped.
assert loaded_moments.keys() == saved_moments.keys(), sorted(loaded_moments)
for name, saved in saved_moments.items():
    for key, value in saved.items():
        torch.testing.assert_close(loaded_moments[name][key], value, rtol=0, atol=0)
for name, p in resumed.named_parameters():
    torch.testing.assert_close(p.detach(), uninterrupted[name], rtol=0, atol=0)
print("check: the saved Adam moments loaded onto the same parameters; the next step equals the uninterrupted run")
# --- check: end
