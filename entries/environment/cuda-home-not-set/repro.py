"""Reproducer for cuda-home-not-set.

The machine: a CUDA build of torch (12.4) and no CUDA toolkit it can find: no `CUDA_HOME`
or `CUDA_PATH`, no `nvcc` on PATH, no `/usr/local/cuda`. torch's CPU wheel stands for
the CUDA one here (`torch.version.cuda` set to "12.4" and the CUDA build's device-count
binding added, answering 0 GPUs: a CPU build never looks for a toolkit, see the entry), and a toolkit this machine
may have at `/usr/local/cuda` is hidden while `torch.utils.cpp_extension` looks for one,
as on a machine without it.

`python repro.py`: a `setup.py`-style `CUDAExtension(...)` asks for the toolkit's include
folder; torch found no toolkit at import, and `_join_cuda_home` raises
`OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.`
`python repro.py --fixed`: `CUDA_HOME` names a CUDA 12.4 toolkit (the
`nvidia-cuda-nvcc-cu12` 12.4.131 wheel's folder stands for `/usr/local/cuda-12.4`).
The check: the extension's include and library folders are that toolkit's, the C++
compiler finds the toolkit's `fatbinary_section.h` through the include folders torch
derived, and the toolkit's `bin/ptxas` reports release 12.4, the CUDA of the torch build.
"""

import importlib.metadata
import os
import subprocess
import sys
import tempfile

import torch

FIXED = "--fixed" in sys.argv[1:]

# The toolkit a reader would install (its location comes from the package, not from torch).
TOOLKIT = str(
    importlib.metadata.distribution("nvidia-cuda-nvcc-cu12").locate_file("nvidia/cuda_nvcc")
)

# The machine: a CUDA 12.4 build of torch, no toolkit variable, no nvcc on PATH.
torch.version.cuda = "12.4"  # type: ignore[misc]
torch._C._cuda_getDeviceCount = lambda: 0  # a CUDA build's binding; no GPU on this machine
for variable in ("CUDA_HOME", "CUDA_PATH"):
    os.environ.pop(variable, None)
os.environ["PATH"] = os.pathsep.join(
    folder
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
    if not os.path.isfile(os.path.join(folder, "nvcc"))
)

if FIXED:
    # --- fix: start
    # Point torch at the CUDA toolkit (the one matching torch.version.cuda), before
    # torch.utils.cpp_extension is imported: it looks for the toolkit once, at import.
    os.environ["CUDA_HOME"] = TOOLKIT
    # --- fix: end

real_exists = os.path.exists
os.path.exists = lambda path: path != "/usr/local/cuda" and real_exists(path)  # type: ignore[assignment]
from torch.utils import cpp_extension  # noqa: E402

os.path.exists = real_exists

print("torch", torch.__version__, "| torch.version.cuda", torch.version.cuda)
print("torch.utils.cpp_extension.CUDA_HOME =", cpp_extension.CUDA_HOME)
with tempfile.TemporaryDirectory(prefix="repro-cuda-home-") as work:
    source = os.path.join(work, "probe.cpp")
    with open(source, "w") as handle:
        handle.write(
            "#include <fatbinary_section.h>\n"
            'static_assert(FATBINC_MAGIC == 0x466243B1, "not the CUDA fatbinary header");\n'
            "int probe() { return FATBINC_VERSION; }\n"
        )
    extension = cpp_extension.CUDAExtension("probe_ext", [source])
    print("CUDAExtension include_dirs:", extension.include_dirs)
    print("CUDAExtension library_dirs:", extension.library_dirs)

    # --- check: start
    toolkit = os.path.realpath(TOOLKIT)
    cuda_includes = [d for d in extension.include_dirs if os.path.realpath(d).startswith(toolkit)]
    assert cuda_includes == [os.path.join(TOOLKIT, "include")], extension.include_dirs
    # lib64, or lib where the toolkit has no lib64 (the wheel's layout)
    cuda_libs = [d for d in extension.library_dirs if os.path.realpath(d).startswith(toolkit)]
    assert cuda_libs and os.path.isdir(cuda_libs[0]), extension.library_dirs
    assert "cudart" in extension.libraries, extension.libraries
    # The compiler finds the toolkit's header through the folders torch derived.
    subprocess.run(
        ["c++", "-std=c++17", "-fsyntax-only", *(f"-I{d}" for d in cuda_includes), source],
        check=True,
    )
    ptxas = subprocess.run(
        [os.path.join(cpp_extension.CUDA_HOME, "bin", "ptxas"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"release {torch.version.cuda}," in ptxas, ptxas
    print(f"check: CUDA_HOME's include and library folders, header and ptxas {torch.version.cuda}")
    # --- check: end
