"""Reproducer for cuda-extension-build-no-visible-gpu.

The machine: a `docker build` (or a login node, or `CUDA_VISIBLE_DEVICES=""`): a CUDA 12.4
build of torch and a CUDA 12.4 toolkit at `CUDA_HOME`, but no GPU visible. torch's CPU
wheel stands for the CUDA one (`torch.version.cuda` set to "12.4" and the CUDA build's
device-count binding added, answering 0 GPUs), and the `nvidia-cuda-nvcc-cu12` 12.4.131
wheel's folder stands for the toolkit. Importing `torch.utils.cpp_extension` prints `No
CUDA runtime is found, using CUDA_HOME='...'` in both modes: it says only that no GPU is
visible.

Both modes build a tiny CUDA extension (`add_one.cu`) as `torch.utils.cpp_extension.load`
does: its `_write_ninja_file_to_build_library` writes the ninja file whose nvcc command
carries the `-gencode` flags that `_get_cuda_arch_flags` chose.

`python repro.py`: `TORCH_CUDA_ARCH_LIST` is unset, so torch takes the architectures of the
visible GPUs: none. The list stays empty and `arch_list[-1] += '+PTX'` raises
`IndexError: list index out of range`.
`python repro.py --fixed`: `TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX"` names the GPUs the
extension is for (A100, and RTX 30xx / A10 / A40), as a Dockerfile's `ENV` line does. The
check: the nvcc command ninja would run for `add_one.cu` carries exactly the `-gencode`
pairs worked out by hand from that list (machine code for sm_80 and sm_86, PTX for
compute_86); then the kernel is compiled for each with the toolkit's own `ptxas`, the stage
nvcc runs for each `code=sm_XY` (the wheel has no nvcc front end, so the kernel's PTX is
written out below). Each cubin's ELF header says CUDA (EM_CUDA) and the architecture
asked for, and the compute_86 PTX also compiles for an sm_90 GPU, as the driver does for a
GPU newer than the list. Nothing needs a GPU or the network.
"""

import importlib.metadata
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]

# The toolkit (its location comes from the package, not from torch).
TOOLKIT = str(
    importlib.metadata.distribution("nvidia-cuda-nvcc-cu12").locate_file("nvidia/cuda_nvcc")
)

# The machine: a CUDA 12.4 build of torch and a toolkit at CUDA_HOME, with no GPU visible.
torch.version.cuda = "12.4"  # type: ignore[misc]
torch._C._cuda_getDeviceCount = lambda: 0  # a CUDA build's binding; no GPU in a docker build
os.environ["CUDA_HOME"] = TOOLKIT
os.environ.pop("TORCH_CUDA_ARCH_LIST", None)

if FIXED:
    # --- fix: start
    # Name the GPUs the extension is for: with no GPU visible torch cannot find them
    # (in a Dockerfile: ENV TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX").
    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6+PTX"
    # --- fix: end

from torch.utils import cpp_extension  # noqa: E402

# What nvcc's front end makes of add_one.cu's kernel: PTX for one virtual architecture.
KERNEL = """
__global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""
PTX = """.version 8.4
.target {target}
.address_size 64

.visible .entry add_one(.param .u64 add_one_param_0, .param .u32 add_one_param_1)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [add_one_param_0];
    ld.param.u32 %r2, [add_one_param_1];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, 0f3F800000;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}}
"""

print("torch", torch.__version__, "| torch.version.cuda", torch.version.cuda)
print("visible GPUs:", torch.cuda.device_count(), "| CUDA_HOME =", cpp_extension.CUDA_HOME)
print("TORCH_CUDA_ARCH_LIST =", os.environ.get("TORCH_CUDA_ARCH_LIST"))
with tempfile.TemporaryDirectory(prefix="repro-arch-list-") as work:
    source = os.path.join(work, "add_one.cu")
    with open(source, "w") as handle:
        handle.write(KERNEL)
    # The step of torch.utils.cpp_extension.load that writes the build file (and asks
    # _get_cuda_arch_flags for the -gencode flags); load() then runs ninja on it.
    cpp_extension._write_ninja_file_to_build_library(
        path=os.path.join(work, "build.ninja"),
        name="add_one_ext",
        sources=[source],
        extra_cflags=[],
        extra_cuda_cflags=[],
        extra_sycl_cflags=[],
        extra_ldflags=[],
        extra_include_paths=[],
        with_cuda=True,
        with_sycl=False,
        is_standalone=False,
    )
    # The nvcc command ninja runs for add_one.cu, as ninja expands it.
    command = subprocess.run(
        ["ninja", "-C", work, "-t", "commands", "add_one.cuda.o"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    words = shlex.split(command)
    gencode = sorted({tuple(m) for m in re.findall(r"-gencode=arch=(\w+),code=(\w+)", command)})
    print("nvcc command:", words[0], "... -c", words[words.index("-c") + 1])
    print("-gencode pairs:", gencode)

    # --- check: start
    assert words[0] == os.path.join(TOOLKIT, "bin", "nvcc"), words[0]
    assert words[words.index("-c") + 1] == source, command
    # By hand from "8.0;8.6+PTX": machine code for sm_80 and sm_86, PTX for compute_86.
    expected = [
        ("compute_80", "sm_80"),
        ("compute_86", "compute_86"),
        ("compute_86", "sm_86"),
    ]
    assert gencode == expected, gencode
    ptxas = os.path.join(TOOLKIT, "bin", "ptxas")

    def assemble(virtual, real):
        """ptxas on the PTX for `virtual`, for GPU `real`: the cubin's ELF header."""
        ptx_file = os.path.join(work, f"add_one.{virtual}.ptx")
        cubin_file = os.path.join(work, f"add_one.{virtual}.{real}.cubin")
        with open(ptx_file, "w") as handle:
            handle.write(PTX.format(target=virtual.replace("compute_", "sm_")))
        subprocess.run([ptxas, f"-arch={real}", ptx_file, "-o", cubin_file], check=True)
        with open(cubin_file, "rb") as handle:
            cubin = handle.read()
        assert cubin[:4] == b"\x7fELF" and struct.unpack_from("<H", cubin, 18)[0] == 190  # EM_CUDA
        assert b"add_one" in cubin, "the kernel is missing from the cubin"
        e_flags = struct.unpack_from("<I", cubin, 48)[0]
        # EF_CUDA_SM in the low byte, the virtual architecture in bits 16-23
        print(f"{os.path.basename(cubin_file)}: EM_CUDA, e_flags {e_flags:#x}")
        return f"compute_{(e_flags >> 16) & 0xFF}", f"sm_{e_flags & 0xFF}"

    for virtual, code in gencode:
        if code.startswith("sm_"):  # machine code, as nvcc has ptxas make it
            assert assemble(virtual, code) == (virtual, code), (virtual, code)
        else:  # PTX kept for newer GPUs: the driver compiles it for them (here an sm_90)
            assert code == virtual == gencode[-1][0], (virtual, code)
            assert assemble(virtual, "sm_90") == (virtual, "sm_90"), virtual
    print("check: the -gencode pairs of 8.0;8.6+PTX, cubins for sm_80 and sm_86, PTX for sm_90")
    # --- check: end
