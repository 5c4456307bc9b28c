"""Reproducer for cholesky-not-positive-definite.

`python repro.py`: Gaussian-process regression, the textbook way: an RBF kernel matrix
over 200 training inputs plus a small noise term (1e-6 on the diagonal), factored with
`torch.linalg.cholesky` to solve for the posterior mean. In exact arithmetic the matrix
is positive-definite (its smallest eigenvalue is the 1e-6 noise), but it is built and
factored in float32, torch's default dtype: the kernel's rounding errors (about 1e-7 per
entry, over 200 rows) and the factorization's own round-off exceed 1e-6, and a pivot
turns non-positive halfway through. `linalg.cholesky` raises `The factorization could not
be completed because the input is not positive-definite (the leading minor of order N is
not positive-definite)`.
`python repro.py --fixed`: the same inputs, kernel and noise in float64, whose round-off
(about 1e-16 per entry) stays far below the noise. The check confirms that the factor
reproduces the matrix, that the posterior mean equals the one from an LU solve
(`torch.linalg.solve`, no Cholesky), and that it predicts the function at held-out points.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

DTYPE = torch.get_default_dtype()  # float32
if FIXED:
    # --- fix: start
    DTYPE = torch.float64  # round-off ~1e-16, far below the 1e-6 noise on the diagonal
    # --- fix: end

LENGTHSCALE, NOISE, N = 0.3, 1e-6, 200


def target(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(6 * x)


def rbf(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / LENGTHSCALE**2)


x_train = torch.rand(N).to(DTYPE)
y_train = target(x_train)
x_test = torch.linspace(0.05, 0.95, 19).to(DTYPE)

K = rbf(x_train, x_train) + NOISE * torch.eye(N, dtype=DTYPE)
print(f"kernel matrix {tuple(K.shape)} in {K.dtype}, noise {NOISE:g} on the diagonal")
L = torch.linalg.cholesky(K)
alpha = torch.cholesky_solve(y_train[:, None], L)[:, 0]
mean = rbf(x_test, x_train) @ alpha
print(f"posterior mean at {len(x_test)} test points: max error {(mean - target(x_test)).abs().max():.2e}")

# --- check: start
K64 = rbf(x_train.double(), x_train.double()) + NOISE * torch.eye(N, dtype=torch.float64)
assert torch.linalg.eigvalsh(K64).min() > 0.5 * NOISE  # positive-definite, as GP kernels are
torch.testing.assert_close((L @ L.mT).double(), K64, rtol=0, atol=1e-12)  # L L^T = K
reference = rbf(x_test.double(), x_train.double()) @ torch.linalg.solve(K64, y_train.double())
torch.testing.assert_close(mean.double(), reference, rtol=1e-6, atol=1e-6)  # LU solve agrees
assert (mean.double() - target(x_test.double())).abs().max() < 1e-3  # and it predicts sin(6x)
print("check: L @ L.T equals the kernel matrix; the posterior mean equals an LU solve's and predicts the function")
# --- check: end
