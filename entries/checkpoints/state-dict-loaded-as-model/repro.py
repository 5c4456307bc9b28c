"""Reproducer for state-dict-loaded-as-model.

`python repro.py`: training saves `model.state_dict()` (the recommended form: tensors
only, no pickled class); the evaluation script treats the file as a whole pickled model,
`model = torch.load(path)`, and calls `model.eval()` on what is an `OrderedDict` of
tensors, so Python raises "'collections.OrderedDict' object has no attribute 'eval'".
`python repro.py --fixed`: the evaluation script builds the model from its class and
loads the saved state into it with `load_state_dict`.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5))
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


torch.manual_seed(0)
inputs = torch.randn(5, 8)
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "net.pt")
    # training script: a few steps, then save the weights
    trained = Net()
    optimizer = torch.optim.SGD(trained.parameters(), lr=0.1)
    for _ in range(3):
        loss = trained(torch.randn(16, 8)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(trained.state_dict(), path)
    trained.eval()
    with torch.no_grad():
        saved_outputs = trained(inputs)  # what the saved model computes in eval mode

    # evaluation script
    def load_model(path: str) -> nn.Module:
        return torch.load(path)  # the file holds a state_dict, not a model

    if FIXED:
# --- fix: start
        def load_model(path: str) -> nn.Module:
            model = Net()  # build the architecture, then fill in the saved weights
            model.load_state_dict(torch.load(path, map_location="cpu"))
            return model
# --- fix: end

    model = load_model(path)
    model.eval()
    with torch.no_grad():
        outputs = model(inputs)
    print("outputs:", tuple(outputs.shape))

    # --- check: start
    torch.testing.assert_close(outputs, saved_outputs, rtol=0, atol=0)  # same as the saved model
    assert not model.training  # dropout off, batch norm on its running statistics
    print("check: the loaded model gives the saved model's eval-mode outputs exactly")
    # --- check: end
