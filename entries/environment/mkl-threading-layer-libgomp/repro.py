"""Reproducer for mkl-threading-layer-libgomp.

`python repro.py`: a launcher starts 2 worker processes, as a DDP launch does (Ultralytics
runs `python -m torch.distributed.run` with `subprocess.run`, fairseq uses spawned
processes). The launcher imports `mkl` (mkl-service; conda's MKL builds of numpy run
`import mkl` on `import numpy`) before any OpenMP runtime is loaded, so mkl-service picks
Intel OpenMP and writes `MKL_THREADING_LAYER=INTEL` into the process environment (C's
`setenv`: the launcher's `os.environ` does not show it). Each worker inherits it (and
prints it), imports torch first (torch's `libgomp.so.1`, GNU OpenMP, is loaded),
then `mkl`: mkl-service finds GNU OpenMP already loaded while the variable asks for Intel
OpenMP, prints `Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is
incompatible with libgomp.so.1 library.` and calls `exit(1)`; the launcher reports the
failed workers.
`python repro.py --fixed`: `MKL_THREADING_LAYER=GNU` is set before anything imports
`mkl`, so mkl-service leaves the choice alone and, in every worker, MKL runs on the GNU
OpenMP runtime torch loaded. Each worker multiplies its shard of the rows with MKL's
`cblas_dgemm`, MKL set to 2 threads; the check asserts the product equals one computed
with Python integers, and that each worker ran MKL's GNU threading layer with one OpenMP
runtime (no `libiomp5.so`).
"""

import ctypes
import json
import os
import subprocess
import sys

FIXED = "--fixed" in sys.argv[1:]
WORLD_SIZE = 2
M, K, N = 8, 6, 4  # A is M x K, B is K x N; each rank computes M // WORLD_SIZE rows of A @ B


def a_row(i: int) -> list[int]:
    return [(3 * i + 5 * k) % 11 - 5 for k in range(K)]


def b_row(k: int) -> list[int]:
    return [(7 * k + 2 * j) % 13 - 6 for j in range(N)]


def loaded_libraries() -> set[str]:
    """Names of the shared libraries mapped into this process."""
    with open("/proc/self/maps") as maps:
        return {os.path.basename(line.split()[-1]) for line in maps if ".so" in line}


def worker(rank: int) -> None:
    """The training script a rank runs: torch first, numpy (so mkl) later."""
    import torch  # loads GNU OpenMP (torch/lib/libgomp.so.1)

    inherited = os.environ.get("MKL_THREADING_LAYER")  # nobody exported it: the launcher's
    print(f"rank {rank}: MKL_THREADING_LAYER={inherited!r} inherited", file=sys.stderr, flush=True)
    openmp_at_import = sorted(p for p in loaded_libraries() if "gomp" in p or "iomp" in p)
    import mkl  # mkl-service: checks MKL_THREADING_LAYER against the loaded OpenMP runtime

    mkl.set_num_threads(2)
    rows = range(rank * M // WORLD_SIZE, (rank + 1) * M // WORLD_SIZE)
    a = torch.tensor([a_row(i) for i in rows], dtype=torch.float64)
    b = torch.tensor([b_row(k) for k in range(K)], dtype=torch.float64)
    c = torch.zeros(len(rows), N, dtype=torch.float64)
    mkl_rt = next(p for p in loaded_libraries() if p.startswith("libmkl_rt.so"))
    dgemm = ctypes.CDLL(mkl_rt).cblas_dgemm  # the MKL mkl-service loaded, not torch's own
    dgemm.restype = None
    row_major, no_trans = 101, 111
    dgemm(
        row_major, no_trans, no_trans, len(rows), N, K,
        ctypes.c_double(1.0), ctypes.c_void_p(a.data_ptr()), K,
        ctypes.c_void_p(b.data_ptr()), N,
        ctypes.c_double(0.0), ctypes.c_void_p(c.data_ptr()), N,
    )  # fmt: skip
    libraries = loaded_libraries()
    print(json.dumps({
        "rank": rank,
        "rows": list(rows),
        "product": c.tolist(),
        "openmp_at_import": openmp_at_import,
        "mkl_threads": mkl.get_max_threads(),
        "openmp": sorted(p for p in libraries if "gomp" in p or "iomp" in p),
        "mkl_threading": sorted(p for p in libraries if p.startswith("libmkl_") and "thread" in p),
    }))  # fmt: skip


def launcher() -> None:
    if FIXED:
# --- fix: start
        # Choose MKL's GNU OpenMP threading layer before anything imports mkl (numpy from
        # conda does): torch loads GNU OpenMP, and every child process inherits the choice.
        os.environ["MKL_THREADING_LAYER"] = "GNU"
# --- fix: end

    import mkl  # the launcher's `import numpy` (conda's MKL build) imports mkl-service here

    seen = os.environ.get("MKL_THREADING_LAYER")  # Python's copy; mkl-service uses C's setenv
    print(f"launcher: mkl-service {mkl.__version__}, os.environ MKL_THREADING_LAYER={seen!r}")
    sys.stdout.flush()
    command = [sys.executable, __file__, "--worker"]
    workers = [
        subprocess.Popen([*command, str(rank)], stdout=subprocess.PIPE, text=True)
        for rank in range(WORLD_SIZE)
    ]
    outputs = [w.communicate()[0] for w in workers]
    failed = [(rank, w.returncode) for rank, w in enumerate(workers) if w.returncode != 0]
    if failed:
        raise SystemExit(f"launcher: worker(s) failed (rank, exit status): {failed}")
    results = sorted((json.loads(out.splitlines()[-1]) for out in outputs), key=lambda r: r["rank"])
    for r in results:
        print(
            f"rank {r['rank']}: OpenMP loaded at `import mkl`: {r['openmp_at_import']}; "
            f"after dgemm: {r['openmp']}, {r['mkl_threading']}, {r['mkl_threads']} MKL threads"
        )

    # --- check: start
    product = [row for r in results for row in r["product"]]
    b = [b_row(k) for k in range(K)]
    reference = [[sum(a_row(i)[k] * b[k][j] for k in range(K)) for j in range(N)] for i in range(M)]
    assert product == reference, f"MKL's product differs from the integer reference: {product}"
    for r in results:
        layer = [p.split(".so")[0] for p in r["mkl_threading"]]
        assert layer == ["libmkl_gnu_thread"], f"rank {r['rank']}: MKL threading layer {layer}"
        assert not any("iomp" in p for p in r["openmp"]), f"rank {r['rank']}: {r['openmp']}"
        assert r["mkl_threads"] == 2, f"rank {r['rank']}: MKL ran on {r['mkl_threads']} threads"
    print(f"check: {WORLD_SIZE} workers' MKL dgemm on GNU OpenMP equals the integer reference")
    # --- check: end


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[sys.argv.index("--worker") + 1]))
    else:
        launcher()
