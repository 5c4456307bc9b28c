"""Reproducer for distribution-parameter-nan.

`python repro.py`: a variational autoencoder is trained with Adam (lr 1e-2) on sensor
readings in their raw 0-255 units. The reconstruction term is then about 10^5 times
the KL term, so every step pushes the encoder's log-variance further down; once the
posterior's standard deviation is below about 1e-22, `kl_divergence` computes
`log(0)`, the loss is `inf`, the backward pass writes NaN into the encoder's weights,
and the next batch's `Normal(mu, std)` refuses the NaN `mu`.
`python repro.py --fixed`: each input channel is standardised (zero mean, unit
variance) before training, as the model's unit-variance likelihood assumes. The same
model, optimizer and learning rate then train to the end. The check asserts that every
loss was finite, that the loss fell, and that the encoder's means recover the two
factors that generated the data (linear R^2 above 0.9).
"""

import sys

import torch
from torch import nn
from torch.distributions import Normal, kl_divergence

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
torch.set_num_threads(1)

# 2048 readings of 32 channels, driven by 2 hidden factors, recorded as 0-255 values.
n, channels = 2048, 32
factors = torch.randn(n, 2)
mixing = torch.randn(2, channels)
readings = (torch.sigmoid(factors @ mixing + 0.1 * torch.randn(n, channels)) * 255).round()
inputs = readings

if FIXED:
    # --- fix: start
    # Standardise every channel: the unit-variance Gaussian likelihood and the N(0, 1)
    # prior assume inputs of order 1, not raw 0-255 units.
    channel_mean, channel_std = readings.mean(0), readings.std(0)
    inputs = (readings - channel_mean) / channel_std
    # --- fix: end


class VAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(channels, 64), nn.ReLU(), nn.Linear(64, 4))
        self.decoder = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, channels))

    def encode(self, x: torch.Tensor) -> Normal:
        mu, logvar = self.encoder(x).chunk(2, dim=-1)
        return Normal(mu, torch.exp(0.5 * logvar))  # validates loc and scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        posterior = self.encode(x)
        likelihood = Normal(self.decoder(posterior.rsample()), 1.0)
        kl = kl_divergence(posterior, Normal(0.0, 1.0)).sum(-1)
        return (kl - likelihood.log_prob(x).sum(-1)).mean()  # negative ELBO


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
order = torch.Generator().manual_seed(1)
batch_size = 128
losses = []
for epoch in range(8):
    permutation = torch.randperm(n, generator=order)
    for start in range(0, n, batch_size):
        loss = model(inputs[permutation[start:start + batch_size]])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    epoch_mean = sum(losses[-(n // batch_size):]) / (n // batch_size)
    print(f"epoch {epoch}: mean loss {epoch_mean:.4g}")

# --- check: start
steps_per_epoch = n // batch_size
first_epoch = sum(losses[:steps_per_epoch]) / steps_per_epoch
last_epoch = sum(losses[-steps_per_epoch:]) / steps_per_epoch
assert all(torch.isfinite(torch.tensor(losses))), "a training loss was not finite"
assert last_epoch < first_epoch < losses[0], (losses[0], first_epoch, last_epoch)
# Reference: the factors that generated the data. A trained encoder's means predict them
# linearly; an untrained or diverged one does not.
with torch.no_grad():
    codes = model.encode(inputs).loc
design = torch.cat([codes, torch.ones(n, 1)], dim=1)
fit = design @ torch.linalg.lstsq(design, factors).solution
r2 = 1 - ((fit - factors) ** 2).sum(0) / ((factors - factors.mean(0)) ** 2).sum(0)
print(f"loss {first_epoch:.4g} -> {last_epoch:.4g}; R^2 of the generating factors: {r2.tolist()}")
assert (r2 > 0.9).all(), r2
# --- check: end
