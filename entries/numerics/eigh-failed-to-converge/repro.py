"""Reproducer for eigh-failed-to-converge.

`python repro.py`: a PCA-whitening step standardises a batch of 64 feature vectors,
builds their covariance and calls `torch.linalg.eigh` on it. One feature is constant
in the batch (a dead unit), so its standard deviation is 0, standardising divides 0 by
0, and the NaNs spread into the covariance: LAPACK's eigensolver cannot converge and
torch raises "linalg.eigh: The algorithm failed to converge because the input matrix
is ill-conditioned or has too many repeated eigenvalues (error code: 5)."
`python repro.py --fixed`: the standardisation guards a zero standard deviation (a
constant feature becomes 0, not NaN), so the covariance is finite and `eigh` converges.
"""

import sys

import numpy as np
import torch

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
SAMPLES, FEATURES = 64, 6
features = torch.randn(SAMPLES, FEATURES) @ torch.randn(FEATURES, FEATURES)
features[:, 3] = 1.0  # a unit that is constant over this batch


def standardise(x: torch.Tensor) -> torch.Tensor:
    """Zero mean, unit variance per feature."""
    return (x - x.mean(0)) / x.std(0)


if FIXED:
# --- fix: start
    def standardise(x: torch.Tensor) -> torch.Tensor:
        # a constant feature has std 0: keep it at 0 instead of 0/0 = NaN
        return (x - x.mean(0)) / x.std(0).clamp_min(1e-6)
# --- fix: end

z = standardise(features)
cov = z.T @ z / (SAMPLES - 1)
eigenvalues, eigenvectors = torch.linalg.eigh(cov)
print("covariance eigenvalues:", [round(v, 4) for v in eigenvalues.tolist()])

# --- check: start
# reference: the same statistics in float64 NumPy, a constant feature standardised to 0
x = features.numpy().astype(np.float64)
std = x.std(axis=0, ddof=1)
zr = np.where(std > 0, (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0), 0.0)
expected = np.linalg.eigvalsh(zr.T @ zr / (SAMPLES - 1))
assert torch.isfinite(eigenvalues).all() and torch.isfinite(eigenvectors).all()
np.testing.assert_allclose(eigenvalues.numpy(), expected, rtol=1e-4, atol=1e-4)
# the eigenvectors diagonalise the covariance
torch.testing.assert_close(eigenvectors.T @ cov @ eigenvectors, torch.diag(eigenvalues), rtol=1e-4, atol=1e-4)
print("check: all 6 eigenvalues equal a float64 reference; the constant feature gives eigenvalue 0")
# --- check: end
