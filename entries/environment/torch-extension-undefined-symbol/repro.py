"""Reproducer for torch-extension-undefined-symbol.

A compiled torch extension (flash-attn's `flash_attn_2_cuda`, or any other) is a shared
library that calls into torch's own libraries by their C++ symbol names, and those names
encode the C++ standard library ABI that both were compiled with: a `std::string` parameter
is `Ss` under the old ABI and `NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE` under
the C++11 ABI. flash-attn publishes one wheel per torch release and per ABI
(`...torch2.6cxx11abiFALSE...`, `...cxx11abiTRUE...`); picking the wrong one gives a
module that imports with `ImportError: ...so: undefined symbol: _ZN3c10...`.

`python repro.py`: "installs" a prebuilt extension from the wheel a requirements file
named, `cxx11abiFALSE`, into an environment whose torch was built with the C++11 ABI
(every pip wheel since torch 2.7). The extension is built here with torch's own
extension builder, once per ABI tag, as the project's release job builds its wheels.
Importing it fails with `undefined symbol`, the mangled name of a c10 function with a
`std::string` in its old-ABI spelling.
`python repro.py --fixed`: the wheel is chosen by the installed torch's own ABI,
`torch._C._GLIBCXX_USE_CXX11_ABI` (what flash-attn's setup.py does when it picks a
prebuilt wheel); the module imports and the check compares its fused op with the same
computation in torch.

Needs a C++ compiler and ninja (torch.utils.cpp_extension); builds take 20 to 60 s.
"""

import shutil
import sys
import tempfile

import torch
from torch.utils.cpp_extension import load_inline

FIXED = "--fixed" in sys.argv[1:]

SOURCE = r"""
#include <torch/extension.h>

// out = a + alpha * b, checked like a real fused kernel checks its inputs
torch::Tensor fused_add(torch::Tensor a, torch::Tensor b, double alpha) {
  TORCH_CHECK(a.sizes() == b.sizes(), "fused_add: shapes differ: ", a.sizes(), " vs ", b.sizes());
  return a + alpha * b;
}
"""

torch_abi = "TRUE" if torch._C._GLIBCXX_USE_CXX11_ABI else "FALSE"
print(f"torch {torch.__version__}, built with _GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")

wheel_abi = "FALSE"  # the wheel a requirements file pinned: fused_ops-...torch2.xcxx11abiFALSE...whl
if FIXED:
    # --- fix: start
    # Pick the prebuilt wheel for the ABI the installed torch was built with (or build the
    # extension from source against that torch, which uses its ABI by itself).
    #   $ python -c "import torch; print(torch._C._GLIBCXX_USE_CXX11_ABI)"
    wheel_abi = "TRUE" if torch._C._GLIBCXX_USE_CXX11_ABI else "FALSE"
    # --- fix: end

print(f"installing the prebuilt extension from the cxx11abi{wheel_abi} wheel", flush=True)
build_dir = tempfile.mkdtemp(prefix="repro-ext-abi-")
try:
    # The wheel's shared library: compiled with _GLIBCXX_USE_CXX11_ABI set by its tag.
    fused_ops = load_inline(
        name=f"fused_ops_cxx11abi{wheel_abi}",
        cpp_sources=[SOURCE],
        functions=["fused_add"],
        extra_cflags=["-O1", f"-D_GLIBCXX_USE_CXX11_ABI={1 if wheel_abi == 'TRUE' else 0}"],
        build_directory=build_dir,
        verbose=False,
    )

    # --- check: start
    torch.manual_seed(0)
    a, b = torch.randn(64, 32), torch.randn(64, 32)
    out = fused_ops.fused_add(a, b, 0.5)
    torch.testing.assert_close(out, a + 0.5 * b)
    try:
        fused_ops.fused_add(a, b[:10], 0.5)  # its input check raises through torch's c10::Error
        raise AssertionError("fused_add accepted tensors of different shapes")
    except RuntimeError as error:
        assert "shapes differ" in str(error), error
    print(f"check: the cxx11abi{wheel_abi} extension imports under this torch (cxx11abi{torch_abi}), "
          "computes a + 0.5 * b as torch does, and raises its own input check")
    # --- check: end
finally:
    shutil.rmtree(build_dir, ignore_errors=True)
