"""Reproducer for half-op-not-implemented-cpu.

A model's embeddings were exported in float16 to halve their size. An analysis job on a
CPU machine reduces them to 4 dimensions with PCA (`torch.linalg.svd`). `python repro.py`:
the CPU SVD kernel has no float16 version and raises
`"linalg_svd_cpu" not implemented for 'Half'` (`NotImplementedError` on torch 2.13.0;
older releases raised `RuntimeError` with the same text, and for more ops:
`addmm_impl_cpu_`, `LayerNormKernelImpl`, `slow_conv2d_cpu`). `python repro.py --fixed`:
the PCA runs in float32 on the same float16 values.
"""

import sys

import torch

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

# Exported embeddings: 500 vectors of 32 dims with 4 dominant directions, stored as float16.
embeddings = (torch.randn(500, 4) @ torch.randn(4, 32) + 0.1 * torch.randn(500, 32)).half()
print(f"embeddings: {tuple(embeddings.shape)} {embeddings.dtype} on {embeddings.device}")

x = embeddings
if FIXED:
# --- fix: start
    # CPU has no float16 SVD kernel: run the PCA in float32.
    x = x.float()
# --- fix: end
centered = x - x.mean(dim=0)
_, singular_values, components = torch.linalg.svd(centered, full_matrices=False)
projected = centered @ components[:4].T
explained = (singular_values[:4].pow(2).sum() / singular_values.pow(2).sum()).item()
print(f"projected: {tuple(projected.shape)}, variance explained by 4 components: {explained:.3f}")

# --- check: start
# Reference: the same PCA in float64 on the stored float16 values.
stored = embeddings.double()
stored_centered = stored - stored.mean(dim=0)
_, expected_values, expected_components = torch.linalg.svd(stored_centered, full_matrices=False)
torch.testing.assert_close(singular_values.double(), expected_values, rtol=1e-4, atol=1e-4)
# Components are defined up to sign: compare the rank-4 reconstructions instead.
reconstruction = (projected @ components[:4]).double()
expected_reconstruction = stored_centered @ expected_components[:4].T @ expected_components[:4]
torch.testing.assert_close(reconstruction, expected_reconstruction, rtol=1e-4, atol=1e-4)
print("check: singular values and the 4-component reconstruction match a float64 PCA of the stored embeddings")
# --- check: end
