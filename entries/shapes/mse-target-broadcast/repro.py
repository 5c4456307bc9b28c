"""Reproducer for mse-target-broadcast.

`python repro.py`: a linear regression model ends in `nn.Linear(3, 1)`, so its predictions
have shape `(N, 1)`, while the targets are a vector of shape `(N,)`. `nn.MSELoss`
broadcasts the pair to `(N, N)`, warns `Using a target size (torch.Size([64])) that is
different to the input size (torch.Size([64, 1])). This will likely lead to incorrect
results due to broadcasting.`, and trains on the wrong loss: every prediction is pulled
towards every target, and the model learns little more than the mean.
`python repro.py --fixed`: the prediction is squeezed along dimension 1, so prediction `i`
meets target `i`; training then recovers the least-squares fit.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

features = torch.randn(64, 3)
true_weight, true_bias = torch.tensor([2.0, -1.0, 0.5]), 0.3
targets = features @ true_weight + true_bias + 0.05 * torch.randn(64)  # shape (64,)

model = nn.Linear(3, 1)  # predictions of shape (N, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def predict(batch: torch.Tensor) -> torch.Tensor:
    return model(batch)  # (N, 1)


if FIXED:
# --- fix: start
    def predict(batch: torch.Tensor) -> torch.Tensor:
        """One prediction per sample, shaped like the (N,) targets."""
        return model(batch).squeeze(1)  # (N, 1) -> (N,)
# --- fix: end

for _step in range(300):  # full-batch gradient descent
    loss = criterion(predict(features), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"final training loss {loss.item():.4f}")

# --- check: start
# Reference: the least-squares fit of the same data, solved directly.
design = torch.cat([features, torch.ones(64, 1)], dim=1)
solution = torch.linalg.lstsq(design, targets[:, None]).solution[:, 0]
fitted = torch.cat([model.weight.detach()[0], model.bias.detach()])
torch.testing.assert_close(fitted, solution, atol=1e-3, rtol=0)
print(f"check: trained weights and bias equal the least-squares solution {[round(v, 3) for v in solution.tolist()]}")
# --- check: end
