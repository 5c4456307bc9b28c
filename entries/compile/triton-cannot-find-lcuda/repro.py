"""Reproducer for triton-cannot-find-lcuda.

`python repro.py`: Triton 2.3.1 builds its CUDA helper module (`CudaUtils`, the first
thing it compiles before a kernel runs) with its own build helper, `_build()` in
triton/common/build.py, which runs `gcc main.c ... -shared -fPIC -lcuda -L<driver dirs>`.
The machine's NVIDIA driver library is there only under its versioned name,
`libcuda.so.1`, as a driver installs it (the unversioned `libcuda.so` comes with the CUDA
toolkit or the driver's development package, and container runtimes mount only the
`.so.1`). `-lcuda` makes the linker look for `libcuda.so`, so it prints `/usr/bin/ld:
cannot find -lcuda: No such file or directory` and Triton raises `CalledProcessError`.

What is simulated: this CPU machine has no NVIDIA driver, so a stub library built here
with the driver's soname (`libcuda.so.1`, exporting the driver calls the helper imports,
each answering "no device") stands for it, already loaded as the driver would be, and
`TRITON_LIBCUDA_PATH` names its folder, as it names the driver's folder for Triton where
`ldconfig` does not list it. Triton's build helper, the compiler and the linker run for real.

`python repro.py --fixed`: a `libcuda.so` link to `libcuda.so.1` is made in the driver's
folder (`ln -s libcuda.so.1 libcuda.so`), so the link finds it, the helper module builds,
loads, and its calls reach the driver library.
"""

import atexit
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-lcuda-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")  # build, never reuse

# Triton 2.3.1, installed apart (reproducer.private_requirements): a release whose build
# helper links with `-lcuda`.
sys.path.insert(0, os.path.join(sys.prefix, "failpedia-private", "triton-2.3.1"))

# The machine's driver, as a driver installs it: `libcuda.so.1` only. A stub stands for it.
STUB_SOURCE = r"""
typedef int CUresult;
static const char *message = "libcuda stub: no CUDA device";
CUresult cuGetErrorString(CUresult error, const char **text) { *text = message; return 0; }
#define NO_DEVICE(name) CUresult name() { return 100; /* CUDA_ERROR_NO_DEVICE */ }
NO_DEVICE(cuCtxGetCurrent) NO_DEVICE(cuCtxSetCurrent) NO_DEVICE(cuDeviceGet)
NO_DEVICE(cuDeviceGetAttribute) NO_DEVICE(cuDevicePrimaryCtxRetain)
NO_DEVICE(cuFuncGetAttribute) NO_DEVICE(cuFuncSetAttribute) NO_DEVICE(cuFuncSetCacheConfig)
NO_DEVICE(cuMemAlloc_v2) NO_DEVICE(cuMemFree_v2) NO_DEVICE(cuMemcpyHtoD_v2)
NO_DEVICE(cuModuleGetFunction) NO_DEVICE(cuModuleLoadData)
NO_DEVICE(cuOccupancyMaxActiveClusters) NO_DEVICE(cuTensorMapEncodeTiled)
"""
driver_dir = os.path.join(work, "driver")
os.makedirs(driver_dir)
stub_source = os.path.join(work, "libcuda_stub.c")
with open(stub_source, "w") as f:
    f.write(STUB_SOURCE)
driver_library = os.path.join(driver_dir, "libcuda.so.1")
subprocess.check_call(
    ["gcc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", driver_library, stub_source]
)
ctypes.CDLL(driver_library, mode=ctypes.RTLD_GLOBAL)  # loaded, as the loader finds a driver
os.environ["TRITON_LIBCUDA_PATH"] = driver_dir

if FIXED:
    # --- fix: start
    # Give the linker the unversioned name it looks for: `ln -s libcuda.so.1 libcuda.so`
    # in the driver's folder (or point TRITON_LIBCUDA_PATH at a folder that has it).
    os.symlink("libcuda.so.1", os.path.join(driver_dir, "libcuda.so"))
    # --- fix: end

import triton  # noqa: E402
from triton.runtime.driver import CudaUtils  # noqa: E402

print("triton", triton.__version__, "| libcuda folder:", sorted(os.listdir(driver_dir)))
utils = CudaUtils()  # builds cuda_utils.so from triton/runtime/backends/cuda.c with -lcuda
print("built and loaded Triton's CUDA helper module")

# --- check: start
built = [name for _, _, names in os.walk(os.environ["TRITON_CACHE_DIR"]) for name in names]
assert "cuda_utils.so" in built, built
try:
    utils.get_device_properties(0)  # a call into the driver library, through the module
except RuntimeError as error:
    answer = str(error)
else:
    answer = ""
assert answer == "Triton Error [CUDA]: libcuda stub: no CUDA device", answer
print("check: cuda_utils.so was built and loaded, and its calls reach libcuda.so.1:", answer)
# --- check: end
