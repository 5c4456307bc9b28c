"""Reproducer for glibc-version-not-found.

A Python extension was compiled on a machine with glibc 2.38 or later (Ubuntu 24.04,
Debian 13, Fedora 39): `Python.h` defines `_GNU_SOURCE`, with which glibc 2.38's
`stdlib.h` redirects every `strtol` call to `__isoc23_strtol`, a function glibc 2.38 added
under the symbol version `GLIBC_2.38`. The extension's ELF file therefore records that it
needs `GLIBC_2.38` from `libc.so.6`. Copied to (or installed as a wheel on) a machine
whose glibc is older (this one has 2.36), the import maps the extension, the dynamic
loader checks each needed version against the system's `libc.so.6`, and the import fails
with `ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found
(required by ...)`.

What is simulated: the build machine. Its glibc 2.38 headers are stood in for by
compiling with `strtol` renamed `__isoc23_strtol` (what their `__REDIRECT` does), and its
`libc.so.6` at link time by a library of that name that defines `__isoc23_strtol` under
the version `GLIBC_2.38` (the linker records the version of the library it links
against). The extension is real, and so are this system's glibc, its dynamic loader's
version check and CPython's import that raise the error.

`python repro.py`: the extension built on the newer system is imported here and fails.
`python repro.py --fixed`: the extension is built for this system's glibc (compiled
here, against its own headers and `libc.so.6`), imports, and the sum it parses from a
string equals Python's.

Needs gcc, readelf and Python's headers; builds take a few seconds.
"""

import os
import re
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
#include <stdlib.h>

// Sum of the comma-separated integers in a string, parsed with strtol.
static PyObject* parse_sum(PyObject* self, PyObject* args) {
  const char* text;
  if (!PyArg_ParseTuple(args, "s", &text)) return NULL;
  long long total = 0;
  char* end = (char*)text;
  while (*end) {
    total += strtol(end, &end, 10);
    if (*end == ',') ++end;
  }
  return PyLong_FromLongLong(total);
}

static PyMethodDef methods[] = {
    {"parse_sum", parse_sum, METH_VARARGS, "sum of comma-separated integers"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fastparse", NULL, -1, methods};
PyMODINIT_FUNC PyInit_fastparse(void) { return PyModule_Create(&module); }
"""


def run(cmd: list[str]) -> str:
    """Run a build step, failing loudly with its output."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"build step failed: {' '.join(cmd)}")
    return done.stdout


work = Path(tempfile.mkdtemp(prefix="repro-glibc-"))
try:
    # The build machine's libc.so.6 at link time (see the docstring: what is simulated).
    newer_glibc = work / "build-machine" / "lib"
    newer_glibc.mkdir(parents=True)
    (work / "isoc23.c").write_text(
        "long __isoc23_strtol(const char *s, char **end, int base) { return 0; }\n"
    )
    (work / "glibc-2.38.map").write_text("GLIBC_2.38 { global: __isoc23_strtol; local: *; };\n")
    run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-nostdlib",
            "-Wl,-soname,libc.so.6",
            f"-Wl,--version-script={work / 'glibc-2.38.map'}",
            str(work / "isoc23.c"),
            "-o",
            str(newer_glibc / "libc.so.6"),
        ]
    )
    source = work / "fastparse.c"
    source.write_text(EXTENSION)
    include = f"-I{sysconfig.get_paths()['include']}"

    # The wheel as the newer build machine produced it.
    build = ["gcc", "-O2", "-shared", "-fPIC", include, "-Dstrtol=__isoc23_strtol", str(source)]
    build += [str(newer_glibc / "libc.so.6")]
    if FIXED:
        # --- fix: start
        # Build the extension for this system's glibc: compile it here (or in the oldest
        # image it must run on), against the system's own headers and libc.so.6.
        #   $ pip install --no-binary <package> <package>
        build = ["gcc", "-O2", "-shared", "-fPIC", include, str(source)]
        # --- fix: end

    site = work / "site-packages"
    site.mkdir()
    extension = site / f"fastparse{sysconfig.get_config_var('EXT_SUFFIX')}"
    run(build + ["-o", str(extension)])
    needs = sorted(set(re.findall(r"Name: (GLIBC_[\d.]+)", run(["readelf", "-V", str(extension)]))))
    print("fastparse needs from libc.so.6:", needs, flush=True)

    # The training job on this machine imports it.
    text = ",".join(str(n) for n in range(-50, 1000, 7))
    job = subprocess.run(
        [sys.executable, "-c", f"import fastparse; print(fastparse.parse_sum({text!r}))"],
        env=dict(os.environ, PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
    )
    sys.stdout.write(job.stdout)
    sys.stderr.write(job.stderr)
    sys.stderr.flush()
    if job.returncode != 0:
        raise SystemExit(f"the training job failed (exit {job.returncode})")

    # --- check: start
    reference = sum(int(part) for part in text.split(","))
    assert int(job.stdout.split()[-1]) == reference, (job.stdout, reference)
    print(f"check: the extension imports on this system and its sum equals Python's ({reference})")
    # --- check: end
finally:
    shutil.rmtree(work, ignore_errors=True)
