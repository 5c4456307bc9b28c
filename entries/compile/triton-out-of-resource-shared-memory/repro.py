"""Reproducer for triton-out-of-resource-shared-memory.

`python repro.py`: a hand-written Triton matmul kernel is launched with a tile and a
pipeline depth no GPU can hold: 128x256 output tiles, BLOCK_K=512, num_stages=4. One A
tile and one B tile take (128x512 + 512x256) fp16 = 384 KiB of shared memory, and the
software pipeliner keeps one copy per stage in flight (triton 3.6 compiles it to 1.5 MiB
for sm_90, 1.1 MiB for sm_80), far more than any GPU allows one block (227 KiB on
H100/H200/B200, 163 KiB on A100, 99 KiB on consumer Ampere/Ada). Triton compiles the
kernel, and at the launch `CompiledKernel._init_handles` compares the kernel's
`metadata.shared` with the device's `max_shared_mem` and raises
`triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: ...,
Hardware limit: ...`.
`python repro.py --fixed`: the same kernel runs with a tile and a pipeline depth that fit
(64x64 tiles, BLOCK_K=32, num_stages=3: 24 KiB). The tile sizes only change how the work
is split, not what is computed; the check compares the product with torch's on the same
inputs.

Needs a CUDA GPU, triton (shipped with CUDA builds of torch) and a C compiler (triton
builds its launcher with gcc, clang or $CC).
"""

import os
import shutil
import sys

import torch
import triton
import triton.language as tl

FIXED = "--fixed" in sys.argv[1:]
M, N, K = 512, 512, 2048


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program computes one BLOCK_M x BLOCK_N tile of C = A @ B, walking K in
    # BLOCK_K steps (the loop Triton software-pipelines num_stages deep).
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc)


if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")
if not (os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")):
    sys.exit("triton builds its CUDA launcher with a C compiler: install gcc or set CC")

torch.manual_seed(0)
device = torch.device("cuda")
a = torch.randn(M, K, device=device, dtype=torch.float16)
b = torch.randn(K, N, device=device, dtype=torch.float16)
c = torch.empty(M, N, device=device, dtype=torch.float32)

# The config: big tiles and a deep pipeline.
BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS = 128, 256, 512, 4, 8
if FIXED:
    # --- fix: start
    # Smaller tiles and a shallower pipeline: each stage holds one A and one B tile in
    # shared memory, 3 x (64x32 + 32x64) fp16 = 24 KiB, under every GPU's per-block limit.
    BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS = 64, 64, 32, 3, 4
    # --- fix: end

max_shared = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())["max_shared_mem"]
stage_bytes = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * a.element_size()
print(f"{torch.cuda.get_device_name()}: {max_shared} bytes of shared memory per block; "
      f"tile {BLOCK_M}x{BLOCK_N}x{BLOCK_K}, {NUM_STAGES} stages, about {NUM_STAGES * stage_bytes} bytes of operand buffers")
assert M % BLOCK_M == 0 and N % BLOCK_N == 0 and K % BLOCK_K == 0, "the kernel has no masks"

grid = (M // BLOCK_M, N // BLOCK_N)
matmul_kernel[grid](a, b, c, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                    num_stages=NUM_STAGES, num_warps=NUM_WARPS)
torch.cuda.synchronize()
print(f"computed C = A @ B, {tuple(c.shape)}")

# --- check: start
expected = a.float() @ b.float()  # torch's product of the same fp16 inputs, in fp32
torch.testing.assert_close(c, expected, rtol=1e-3, atol=1e-2)
print(f"check: all {M}x{N} entries of the Triton product equal torch's A @ B")
# --- check: end
