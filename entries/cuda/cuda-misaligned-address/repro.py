"""Reproducer for cuda-misaligned-address.

`python repro.py`: a data pipeline moves packed binary records to the GPU as raw bytes
(one `uint8` tensor per record: a 6-byte header, then float32 samples) and a custom
Triton kernel decodes the samples in place: it casts the byte pointer plus the header
length to a float32 pointer and loads from it. torch itself refuses this view
(`raw[6:].view(torch.float32)` fails: the offset is not a multiple of 4), but the kernel
does the cast itself. A 4-byte load from an address that is not a multiple of 4 faults on
the GPU (`cudaErrorMisalignedAddress`); the launch returns at once, and the next
synchronizing call, `torch.cuda.synchronize()`, raises
`torch.AcceleratorError: CUDA error: misaligned address` (`RuntimeError` before torch
2.8). Every run faults: the buffer comes from the caching allocator, so it starts at a
multiple of 512 bytes and the samples at 6 bytes past one.
`python repro.py --fixed`: the samples are first copied out of the record into their own
allocation (`raw[HEADER:].clone()`), which starts aligned, and the kernel reads them from
offset 0. The kernel and its output are unchanged; the check compares the decoded and
scaled samples with the same computation on the CPU from the values that were packed.

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
HEADER = 6  # bytes before the samples in each record: 2-byte tag + 4-byte sample count
N = 1000  # float32 samples in the record
BLOCK = 256


@triton.jit
def decode_scale_kernel(src_ptr, byte_offset, out_ptr, n, BLOCK: tl.constexpr):
    # src_ptr points at bytes; the float32 samples start `byte_offset` bytes in.
    samples = (src_ptr + byte_offset).to(tl.pointer_type(tl.float32))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(samples + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2.0 + 1.0, mask=mask)


if not torch.cuda.is_available():
    sys.exit("this reproducer needs a CUDA GPU")
if not (os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")):
    sys.exit("triton builds its CUDA launcher with a C compiler: install gcc or set CC")

# One packed record, as it arrives from a file or a socket: header, then the samples.
values = torch.randn(N, generator=torch.Generator().manual_seed(0))
header = bytes([0x52, 0x31]) + N.to_bytes(4, "little")
record = header + bytes(values.view(torch.uint8).tolist())  # the float32 samples, raw
raw = torch.frombuffer(bytearray(record), dtype=torch.uint8).to("cuda")
print(f"record: {raw.numel()} bytes at 0x{raw.data_ptr():x}; samples at byte {HEADER}, "
      f"address 0x{raw.data_ptr() + HEADER:x} (address % 4 = {(raw.data_ptr() + HEADER) % 4})", flush=True)

src, byte_offset = raw, HEADER  # decode the samples in place, 6 bytes into the record
if FIXED:
    # --- fix: start
    # Copy the samples into their own allocation, which starts aligned (the caching
    # allocator hands out blocks at multiples of 512 bytes), and read them from offset 0.
    src, byte_offset = raw[HEADER:].clone(), 0
    # --- fix: end

out = torch.empty(N, dtype=torch.float32, device="cuda")
decode_scale_kernel[(triton.cdiv(N, BLOCK),)](src, byte_offset, out, N, BLOCK=BLOCK)
torch.cuda.synchronize()  # the kernel's fault is reported here
print(f"decoded {N} samples from 0x{src.data_ptr() + byte_offset:x}", flush=True)

# --- check: start
expected = values * 2.0 + 1.0  # the same decoding and scaling, on the CPU, from the packed values
torch.testing.assert_close(out.cpu(), expected, rtol=0, atol=0)
print(f"check: all {N} samples decoded and scaled exactly as on the CPU")
# --- check: end
