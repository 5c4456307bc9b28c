"""Reproducer for extension-imported-before-torch.

A compiled extension built against PyTorch links torch's shared libraries by name
(`libc10.so`, and `libtorch.so`, `libtorch_cpu.so`, `libtorch_python.so` for bigger ones),
as `torch.utils.cpp_extension` builds do: `-L<torch>/lib -lc10`, with no run path to that
folder. Importing torch loads those libraries from `<torch>/lib`; after that the dynamic
loader finds them already in the process. Importing the extension first asks the loader
to find `libc10.so` on its own search path, where it is not, and the import fails with
`ImportError: libc10.so: cannot open shared object file: No such file or directory`.

The extension here is real and small: a CPython module (`halfround`) compiled with g++
against torch's headers and linked against torch's `libc10.so`, whose function rounds
floats to half precision with `c10::Half` in a buffer from torch's CPU allocator.

`python repro.py`: the training script imports the extension at the top, before torch.
`python repro.py --fixed`: torch is imported first, then the extension; the check compares
its result with torch's own float16 round trip.

Needs g++ and Python's headers; the build takes a few seconds.
"""

import importlib
import importlib.util
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
#include <c10/core/CPUAllocator.h>
#include <c10/util/Half.h>

// Round each float of a buffer to half precision and back, in memory from torch's CPU
// allocator (a symbol of libc10.so), as a kernel of a real extension would.
static PyObject* round_to_half(PyObject*, PyObject* args) {
  Py_buffer in;
  if (!PyArg_ParseTuple(args, "y*", &in)) return nullptr;
  Py_ssize_t n = in.len / (Py_ssize_t)sizeof(float);
  c10::DataPtr out = c10::GetCPUAllocator()->allocate(n * sizeof(float));
  const float* src = static_cast<const float*>(in.buf);
  float* dst = static_cast<float*>(out.get());
  for (Py_ssize_t i = 0; i < n; ++i) dst[i] = static_cast<float>(c10::Half(src[i]));
  PyObject* result = PyBytes_FromStringAndSize(static_cast<const char*>(out.get()), n * sizeof(float));
  PyBuffer_Release(&in);
  return result;
}

static PyMethodDef methods[] = {{"round_to_half", round_to_half, METH_VARARGS, nullptr},
                                {nullptr, nullptr, 0, nullptr}};
static PyModuleDef module = {PyModuleDef_HEAD_INIT, "halfround", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_halfround() { return PyModule_Create(&module); }
"""


def build_extension(folder: Path) -> None:
    """Compile the extension against the installed torch without importing torch here,
    so this process imports the extension exactly as the training script would."""
    compiler = shutil.which("g++")
    if compiler is None:
        sys.exit("repro.py needs g++ to build the extension")
    torch_dir = Path(importlib.util.find_spec("torch").submodule_search_locations[0])
    source = folder / "halfround.cpp"
    source.write_text(EXTENSION)
    target = folder / ("halfround" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(
        [compiler, "-O1", "-std=c++17", "-shared", "-fPIC", str(source),
         f"-I{torch_dir / 'include'}", f"-I{sysconfig.get_paths()['include']}",
         f"-L{torch_dir / 'lib'}", "-lc10", "-o", str(target)],
        check=True,
    )


with tempfile.TemporaryDirectory() as tmp:
    build_extension(Path(tmp))
    sys.path.insert(0, tmp)

    if FIXED:
# --- fix: start
        import torch  # loads libc10.so and the rest of torch's libraries first
# --- fix: end
    halfround = importlib.import_module("halfround")  # the training script's `import halfround`
    import torch

    values = torch.tensor([0.1, 1 / 3, 1e-4, 65504.0, -2.5e-8, 3.14159], dtype=torch.float32)
    rounded = torch.frombuffer(bytearray(halfround.round_to_half(values.numpy().tobytes())), dtype=torch.float32)
    print("rounded to half:", rounded.tolist())

# --- check: start
# reference: torch's own float16 round trip of the same values
torch.testing.assert_close(rounded, values.half().float(), rtol=0, atol=0)
print("check: the extension's half rounding equals torch's float16 round trip")
# --- check: end
