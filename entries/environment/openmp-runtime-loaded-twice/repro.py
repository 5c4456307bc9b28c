"""Reproducer for openmp-runtime-loaded-twice.

`python repro.py`: the environment has Intel's OpenMP runtime installed once, as conda's
`intel-openmp` package puts it in `$CONDA_PREFIX/lib` (here the `intel-openmp` wheel puts
`libiomp5.so` in `sys.prefix/lib`), and a library built on MKL loads and starts it, as
numpy with MKL does. A second package ships its own copy of the runtime in its own folder
(as mxnet-mkl's wheels did, and as torch's Windows wheels ship `torch/lib/libiomp5md.dll`
beside conda's `Library/bin/libiomp5md.dll`); here that package is made in a temporary
folder with a copy of the same `libiomp5.so`. Its loader prefers the bundled file, so the
process maps two copies of the runtime from two paths; when the second starts its first
parallel region, it finds the first one registered (`__kmp_register_library_startup`),
prints `OMP: Error #15: Initializing libiomp5.so, but found libiomp5.so already
initialized.` and its hint, and aborts the process (SIGABRT).
`python repro.py --fixed`: the duplicate file is removed from the package, so its loader
asks for the runtime by name and the dynamic loader hands back the copy already loaded:
one runtime in the process. The check asserts that the parallel region ran on a team of
threads whose partial sums add up to the closed-form sum of squares, that exactly one
copy of the runtime is mapped into the process, and that `KMP_DUPLICATE_LIB_OK` (the
unsafe override) is not set.
"""

import ctypes
import importlib.metadata
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

FIXED = "--fixed" in sys.argv[1:]
RUNTIME = "libiomp5.so"
N = 100_000  # sum of i*i for i < N, split over the team
TEAM = 4  # threads asked for in the parallel region


def installed_runtime() -> Path:
    """The environment's copy: the file the intel-openmp wheel installed."""
    dist = importlib.metadata.distribution("intel-openmp")
    files = [f for f in dist.files or () if f.name == RUNTIME]
    return Path(dist.locate_file(files[0])).resolve()


def runtimes_mapped() -> set[str]:
    """Paths of every copy of the OpenMP runtime mapped into this process."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1] for line in maps if line.rstrip().endswith("/" + RUNTIME)}
    return paths


def make_package_with_bundled_runtime(source: Path, root: str) -> Path:
    """A package that ships its own copy of the runtime next to its code (lib/libiomp5.so)."""
    lib = Path(root) / "bundling_pkg" / "lib"
    lib.mkdir(parents=True)
    shutil.copy2(source, lib / RUNTIME)
    return lib


def load_package_runtime(lib: Path) -> ctypes.CDLL:
    """The package's loader: its bundled copy if there is one, else the runtime by name."""
    bundled = lib / RUNTIME
    if bundled.exists():
        return ctypes.CDLL(str(bundled))
    return ctypes.CDLL(RUNTIME)  # a library with this soname already loaded is reused


def main(root: str) -> None:
    env_runtime = installed_runtime()
    # A library built on MKL (numpy with MKL, in conda) loads the environment's runtime
    # and starts it with its first threaded call.
    mkl_side = ctypes.CDLL(str(env_runtime), mode=ctypes.RTLD_GLOBAL)
    print(
        f"environment runtime {env_runtime}: {mkl_side.omp_get_max_threads()} threads", flush=True
    )

    package_lib = make_package_with_bundled_runtime(env_runtime, root)
    if FIXED:
# --- fix: start
        # One OpenMP runtime per process: remove the copy the second package bundles, so
        # that it uses the runtime the process already has (in an installation: delete or
        # rename the duplicate libiomp5.so / libiomp5md.dll, never KMP_DUPLICATE_LIB_OK).
        (package_lib / RUNTIME).unlink()
# --- fix: end
    omp = load_package_runtime(package_lib)
    print(
        f"package loaded its OpenMP runtime; mapped copies: {sorted(runtimes_mapped())}", flush=True
    )

    # The package's parallel kernel: each thread of the team sums i*i over its stride.
    partial = (ctypes.c_int64 * TEAM)()
    ran_on = {}

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def kernel(_data):
        rank, size = omp.omp_get_thread_num(), omp.omp_get_num_threads()
        partial[rank] = sum(i * i for i in range(rank, N, size))
        ran_on[rank] = (size, threading.get_native_id())

    omp.GOMP_parallel(kernel, None, ctypes.c_uint(TEAM), ctypes.c_uint(0))
    total = sum(partial)
    print(f"parallel region: {len(ran_on)} threads, sum of squares below {N} = {total}", flush=True)

    # --- check: start
    reference = (N - 1) * N * (2 * N - 1) // 6  # closed form, no OpenMP involved
    assert total == reference, f"parallel sum {total} != reference {reference}"
    assert sorted(ran_on) == list(range(TEAM)), f"team ranks {sorted(ran_on)}, expected {TEAM}"
    assert all(size == TEAM for size, _ in ran_on.values()), "a thread saw another team size"
    assert len({tid for _, tid in ran_on.values()}) == TEAM, (
        "the team did not run on distinct threads"
    )
    mapped = runtimes_mapped()
    assert mapped == {str(env_runtime)}, f"OpenMP runtimes mapped: {sorted(mapped)}"
    assert "KMP_DUPLICATE_LIB_OK" not in os.environ, "the unsafe override is set"
    print(f"check: {TEAM} threads summed to {reference} (closed form); one OpenMP runtime mapped")
    # --- check: end


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        main(scratch)
