"""Reproducer for triton-compilation-error.

`python repro.py`: a cross-entropy forward kernel in Triton (the shape of Unsloth's and
Liger's: log-sum-exp over a row, then the target logit) scales the logits when a flag is
set. The flag is an ordinary argument, so `if do_scaling:` is a run-time branch, and the
target logit `x` is loaded as fp16 while `scale * x` is fp32: Triton's front end, which
turns the Python AST into Triton IR, refuses a variable whose type differs between the
branches and raises `triton.compiler.errors.CompilationError: at 13:8:` (line and column within the kernel) with
`initial value for `x` is of type fp16[], but the then block redefines it as fp32[]`.
The front end and the NVIDIA back end up to the cubin need no GPU, so the kernel is
compiled here for an sm_80 target exactly as it is on a GPU machine.
`python repro.py --fixed`: the target logit is cast to fp32 where it is loaded, as the row
is, so both branches have one type. The kernel compiles to a cubin, and Triton's
interpreter (`TRITON_INTERPRET=1`, which runs kernels on the CPU) runs it: its losses
equal `torch.nn.functional.cross_entropy`.
"""

import os
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"  # the child that runs the kernel

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, n_cols, scale, do_scaling, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    logits = tl.load(logits_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    if do_scaling:
        logits = scale * logits
    c = tl.max(logits, 0)
    lse = c + tl.log(tl.sum(tl.exp(logits - c), 0))
    label = tl.load(labels_ptr + row)
    loss = 0.0
    if label != -100:
        x = tl.load(logits_ptr + row * n_cols + label)  # fp16, like the logits in memory
        if do_scaling:
            x = scale * x  # fp32: the branch changes x's type
        loss = lse - x
    tl.store(loss_ptr + row, loss)


if FIXED:
    # --- fix: start
    @triton.jit
    def cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, n_cols, scale, do_scaling, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        logits = tl.load(logits_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        if do_scaling:
            logits = scale * logits
        c = tl.max(logits, 0)
        lse = c + tl.log(tl.sum(tl.exp(logits - c), 0))
        label = tl.load(labels_ptr + row)
        loss = 0.0
        if label != -100:
            x = tl.load(logits_ptr + row * n_cols + label).to(tl.float32)  # fp32 in both branches
            if do_scaling:
                x = scale * x
            loss = lse - x
        tl.store(loss_ptr + row, loss)
    # --- fix: end


ROWS, VOCAB, SCALE = 8, 50, 0.5
if INTERPRETED:
    # In Triton's interpreter: run the kernel on CPU tensors and hand back its losses.
    torch.manual_seed(0)
    logits = torch.randn(ROWS, VOCAB, dtype=torch.float16)
    labels = torch.randint(0, VOCAB, (ROWS,))
    labels[3] = -100  # an ignored position (padding)
    losses = torch.empty(ROWS, dtype=torch.float32)
    cross_entropy_kernel[(ROWS,)](logits, labels, losses, VOCAB, SCALE, 1, BLOCK=64)
    torch.save({"logits": logits, "labels": labels, "losses": losses}, os.environ["KERNEL_OUT"])
    sys.exit(0)

from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

# Compile the kernel for an A100 (sm_80) as `kernel[grid](...)` would on a GPU machine:
# the front end (Python AST to Triton IR) and the back end down to the cubin run on a CPU.
source = ASTSource(
    cross_entropy_kernel,
    signature={"logits_ptr": "*fp16", "labels_ptr": "*i64", "loss_ptr": "*fp32", "n_cols": "i32",
               "scale": "fp32", "do_scaling": "i32", "BLOCK": "constexpr"},
    constexprs={"BLOCK": 64},
)
compiled = triton.compile(source, target=GPUTarget("cuda", 80, 32))
print("compiled for sm_80:", ", ".join(sorted(compiled.asm)))

# Run the compiled kernel's source in Triton's interpreter, in a child (the interpreter is
# chosen when triton is imported), on CPU tensors.
out = os.path.join(tempfile.mkdtemp(prefix="repro-triton-ce-"), "kernel.pt")
env = dict(os.environ, TRITON_INTERPRET="1", KERNEL_OUT=out)
subprocess.run([sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env=env, check=True)
result = torch.load(out)

# --- check: start
assert "cubin" in compiled.asm and len(compiled.asm["cubin"]) > 0, sorted(compiled.asm)
reference = torch.nn.functional.cross_entropy(
    SCALE * result["logits"].float(), result["labels"], ignore_index=-100, reduction="none"
)
torch.testing.assert_close(result["losses"], reference)
print("check: the kernel compiles to an sm_80 cubin and its losses equal torch's cross_entropy:",
      [round(v, 4) for v in result["losses"].tolist()])
# --- check: end
