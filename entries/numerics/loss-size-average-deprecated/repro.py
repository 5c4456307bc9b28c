"""Reproducer for loss-size-average-deprecated.

`python repro.py`: a VAE's loss is the negative ELBO, the reconstruction error summed
over every pixel plus the KL term. The reconstruction loss is built as
`nn.MSELoss("sum")`, but the first positional parameter of the loss classes is the old
`size_average`, not `reduction`: the string "sum" is read as `size_average=True`, the
legacy mapping turns that into reduction 'mean', and torch only warns "size_average and
reduce args will be deprecated, please use reduction='mean' instead.". The
reconstruction term is 784 times smaller than the ELBO needs, and the KL term dominates.
`python repro.py --fixed`: the reduction is passed by keyword, `reduction="sum"`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
BATCH, PIXELS, LATENT = 8, 784, 4
images = torch.rand(BATCH, PIXELS)
decoder = nn.Linear(LATENT, PIXELS)
mu, logvar = torch.randn(BATCH, LATENT), torch.randn(BATCH, LATENT) * 0.1


def reconstruction_loss() -> nn.Module:
    """Squared error summed over pixels and batch, as the ELBO needs."""
    return nn.MSELoss("sum")  # positional: this is size_average, not reduction


if FIXED:
# --- fix: start
    def reconstruction_loss() -> nn.Module:
        return nn.MSELoss(reduction="sum")  # the reduction, by keyword
# --- fix: end

criterion = reconstruction_loss()
with torch.no_grad():
    recon = torch.sigmoid(decoder(mu))
    recon_term = criterion(recon, images)
    kl_term = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = recon_term + kl_term
print(f"reduction {criterion.reduction!r}: reconstruction {recon_term.item():.3f}, KL {kl_term.item():.3f}")

# --- check: start
# reference: the negative ELBO written out by hand, squared errors summed over everything
expected_recon = ((recon - images) ** 2).sum()
torch.testing.assert_close(recon_term, expected_recon)
torch.testing.assert_close(loss, expected_recon + kl_term)
print("check: the reconstruction term is the summed squared error the ELBO needs")
# --- check: end
