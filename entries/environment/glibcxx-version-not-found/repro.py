"""Reproducer for glibcxx-version-not-found.

A C++ extension compiled with GCC 12 calls `std::condition_variable::wait`, which
libstdc++ exports under the symbol version `GLIBCXX_3.4.30` (new in GCC 12), so the
extension's ELF file records that it needs `GLIBCXX_3.4.30` from `libstdc++.so.6`. A
conda environment ships its own, older `libstdc++.so.6` in `$CONDA_PREFIX/lib` (GCC 11's
exports up to `GLIBCXX_3.4.29`) and its Python finds that folder first. When the import
maps the extension, the dynamic loader checks each needed version against the
`libstdc++.so.6` it found and fails the import with
`ImportError: .../libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by ...)`.

What is simulated: the environment's older libstdc++. The script stands in for it with a
library of the same name that defines the version nodes GCC 11's libstdc++ exports
(`GLIBCXX_3.4` to `GLIBCXX_3.4.29`, `CXXABI_1.3` to `CXXABI_1.3.13`) and nothing else,
in an `envs/ml/lib` folder put first on the loader's search path (`LD_LIBRARY_PATH`), as
conda's Python puts `$CONDA_PREFIX/lib` first through its run path. The extension is
real (compiled here with g++ against the system's libstdc++), and so are the dynamic
loader's version check and CPython's import that raise the error.

`python repro.py`: a training job imports the extension (in a Python started with the
environment's library folder first) and the import fails.
`python repro.py --fixed`: the job is started with the libstdc++ the extension was
compiled against preloaded (`LD_PRELOAD=$(g++ -print-file-name=libstdc++.so.6)`), so the
loader resolves `libstdc++.so.6` to it; the check compares what the extension computes
with the same sum computed by Python.

Needs g++ (GCC 12 or later) and Python's headers; builds take a few seconds.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

FIXED = "--fixed" in sys.argv[1:]

EXTENSION = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <condition_variable>
#include <mutex>
#include <thread>

// Sum of i*i for i in [0, n), computed by a worker thread the caller waits for.
static PyObject* sum_squares(PyObject*, PyObject* args) {
  long long n;
  if (!PyArg_ParseTuple(args, "L", &n)) return nullptr;
  std::mutex mutex;
  std::condition_variable ready;
  bool done = false;
  long long total = 0;
  std::thread worker([&] {
    long long s = 0;
    for (long long i = 0; i < n; ++i) s += i * i;
    std::lock_guard<std::mutex> lock(mutex);
    total = s;
    done = true;
    ready.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    while (!done) ready.wait(lock);
  }
  worker.join();
  return PyLong_FromLongLong(total);
}

static PyMethodDef methods[] = {
    {"sum_squares", sum_squares, METH_VARARGS, "sum of i*i for i < n"},
    {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fastsum", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_fastsum(void) { return PyModule_Create(&module); }
"""

# The version nodes GCC 11's libstdc++.so.6 defines: GLIBCXX_3.4 .. GLIBCXX_3.4.29 and
# CXXABI_1.3 .. CXXABI_1.3.13 (GCC 12 added GLIBCXX_3.4.30 and nothing else).
OLD_NODES = ["GLIBCXX_3.4"] + [f"GLIBCXX_3.4.{i}" for i in range(1, 30)]
OLD_NODES += ["CXXABI_1.3"] + [f"CXXABI_1.3.{i}" for i in range(1, 14)]


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a build step, failing loudly with its output."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"build step failed: {' '.join(cmd)}")
    return done


work = Path(tempfile.mkdtemp(prefix="repro-glibcxx-"))
try:
    # The environment's older libstdc++ (see the docstring: what is simulated).
    env_lib = work / "envs" / "ml" / "lib"
    env_lib.mkdir(parents=True)
    stub_c = work / "old_libstdcxx.c"
    stub_c.write_text("".join(f"void node_{i}(void) {{}}\n" for i in range(len(OLD_NODES))))
    script = work / "old_libstdcxx.map"
    nodes = []
    for i, name in enumerate(OLD_NODES):
        parent = "" if name in ("GLIBCXX_3.4", "CXXABI_1.3") else OLD_NODES[i - 1]
        local = " local: *;" if i == 0 else ""
        nodes.append(f"{name} {{ global: node_{i};{local} }} {parent};")
    script.write_text("\n".join(nodes) + "\n")
    run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libstdc++.so.6",
            f"-Wl,--version-script={script}",
            str(stub_c),
            "-o",
            str(env_lib / "libstdc++.so.6"),
        ]
    )

    # The extension, compiled by the system's g++ against the system's libstdc++.
    ext_dir = work / "site-packages"
    ext_dir.mkdir()
    ext_cpp = work / "fastsum.cpp"
    ext_cpp.write_text(EXTENSION)
    ext_so = ext_dir / f"fastsum{sysconfig.get_config_var('EXT_SUFFIX')}"
    run(
        [
            "g++",
            "-O2",
            "-shared",
            "-fPIC",
            "-pthread",
            f"-I{sysconfig.get_paths()['include']}",
            str(ext_cpp),
            "-o",
            str(ext_so),
        ]
    )
    compiler_libstdcxx = run(["g++", "-print-file-name=libstdc++.so.6"]).stdout.strip()
    needs = run(["readelf", "-V", str(ext_so)]).stdout
    print(
        f"fastsum needs GLIBCXX_3.4.30: {'GLIBCXX_3.4.30' in needs}; "
        f"compiled against {os.path.realpath(compiler_libstdcxx)}",
        flush=True,
    )

    # The training job, started in the environment: its library folder comes first.
    job_env = dict(os.environ, PYTHONPATH=str(ext_dir), LD_LIBRARY_PATH=str(env_lib))
    if FIXED:
        # --- fix: start
        # Load the libstdc++ the extension was built against before any other:
        #   $ LD_PRELOAD=$(g++ -print-file-name=libstdc++.so.6) python train.py
        # (or give the environment a libstdc++ at least that new:
        #   $ conda install -c conda-forge 'libstdcxx-ng>=12')
        job_env["LD_PRELOAD"] = os.path.realpath(compiler_libstdcxx)
        # --- fix: end

    N = 100_000
    job = subprocess.run(
        [sys.executable, "-c", f"import fastsum; print(fastsum.sum_squares({N}))"],
        env=job_env,
        capture_output=True,
        text=True,
    )
    sys.stdout.write(job.stdout)
    sys.stderr.write(job.stderr)
    sys.stderr.flush()
    if job.returncode != 0:
        raise SystemExit(f"the training job failed (exit {job.returncode})")

    # --- check: start
    reference = sum(i * i for i in range(N))
    assert int(job.stdout.split()[-1]) == reference, (job.stdout, reference)
    print(
        f"check: the extension imports in the environment and its sum of squares below {N} "
        f"equals Python's ({reference})"
    )
    # --- check: end
finally:
    shutil.rmtree(work, ignore_errors=True)
