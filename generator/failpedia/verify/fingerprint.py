"""The environment fingerprint: where a reproducer was proved.

Gathered once per run by a small Python snippet run in a subprocess, in the same clean
environment reproducers get (``environment.clean_environment``), so the runner itself never
imports torch and what is recorded is what the reproducers saw. Every field that cannot
be determined is ``None``; a missing or broken torch is never an error.

``key`` identifies the environment (device kind, GPU name, torch version, Python
major.minor, OS and machine): a verification record keeps the newest result per key.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from failpedia.verify.environment import clean_environment

MARKER = "FAILPEDIA-FINGERPRINT "
TIMEOUT_SECONDS = 180

# The torch-side fields, as they read when torch or a GPU is missing; shared by the
# subprocess snippet (passed as its second argument) and the in-process fallback.
TORCH_DEFAULTS: dict[str, Any] = {
    "torch": None,
    "cuda": None,
    "cudnn": None,
    "nccl": None,
    "cuda_available": False,
    "gpu_name": None,
    "gpu_count": 0,
}

# Runs in the subprocess: prints one line, MARKER + JSON. Keep it dependency-free.
SNIPPET = r"""
import importlib.metadata, json, platform, sys

def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as file:
            for line in file:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None

def guarded(function):
    try:
        return function()
    except Exception:
        return None

info = {
    "python": platform.python_version(),
    "python_implementation": platform.python_implementation(),
    "os": platform.platform(),
    "system": platform.system(),
    "machine": platform.machine(),
    "cpu": cpu_model(),
    **json.loads(sys.argv[2]),
    "packages": {},
}
for name in json.loads(sys.argv[1]):
    try:
        info["packages"][name] = importlib.metadata.version(name)
    except Exception:
        info["packages"][name] = None
try:
    import torch
except Exception as error:
    info["torch_error"] = f"{type(error).__name__}: {error}"[:300]
else:
    info["torch"] = str(getattr(torch, "__version__", None))
    info["cuda"] = guarded(lambda: torch.version.cuda)
    info["cuda_available"] = bool(guarded(torch.cuda.is_available))
    if info["cuda_available"]:
        info["gpu_count"] = guarded(torch.cuda.device_count) or 0
        info["gpu_name"] = guarded(lambda: torch.cuda.get_device_name(0))
        info["cudnn"] = guarded(
            lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        )

        def nccl():
            version = torch.cuda.nccl.version()
            if isinstance(version, tuple):
                return ".".join(str(part) for part in version[:3])
            version = int(version)  # older releases: one integer, e.g. 2708 or 21803
            if version >= 10000:
                return f"{version // 10000}.{version // 100 % 100}.{version % 100}"
            return f"{version // 1000}.{version // 100 % 10}.{version % 100}"

        info["nccl"] = guarded(nccl)
    elif guarded(lambda: torch.backends.cudnn.is_available()):
        info["cudnn"] = guarded(torch.backends.cudnn.version)
print("FAILPEDIA-FINGERPRINT " + json.dumps(info), flush=True)
"""


def environment_key(info: dict[str, Any]) -> str:
    """A stable string naming the environment, e.g. ``cpu|torch-2.13.0|py3.11|Linux-x86_64``."""
    device = "cuda" if info.get("cuda_available") and info.get("gpu_count") else "cpu"
    python = ".".join(str(info.get("python") or "?").split(".")[:2])
    parts = [device]
    if device == "cuda":
        parts.append(str(info.get("gpu_name") or "unknown GPU"))
    parts += [
        f"torch-{info.get('torch') or 'none'}",
        f"py{python}",
        f"{info.get('system') or '?'}-{info.get('machine') or '?'}",
    ]
    return "|".join(parts)


def driver_version() -> str | None:
    """The NVIDIA driver version from ``nvidia-smi``, when it is on PATH."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        result = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return lines[0] if result.returncode == 0 and lines else None


def _fallback(error: str) -> dict[str, Any]:
    """What can be said without the subprocess: this interpreter's own facts."""
    import platform

    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "os": platform.platform(),
        "system": platform.system(),
        "machine": platform.machine(),
        "cpu": platform.processor() or None,
        **TORCH_DEFAULTS,
        "packages": {},
        "error": error,
    }


def gather(
    packages: Iterable[str] = (),
    *,
    python: str = sys.executable,
    timeout: float = TIMEOUT_SECONDS,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Fingerprint the environment reproducers run in (or, given ``environ``, the one those
    variables make: a training run's, for ``failpedia report``); never raises."""
    names = sorted(set(packages))
    folder = tempfile.mkdtemp(prefix="failpedia-fingerprint-")
    try:
        result = subprocess.run(
            [python, "-c", SNIPPET, json.dumps(names), json.dumps(TORCH_DEFAULTS)],
            cwd=folder,
            env=clean_environment(folder) if environ is None else dict(environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
        line = next((item for item in result.stdout.splitlines() if item.startswith(MARKER)), None)
        if line is None:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            info = _fallback(f"fingerprint snippet exited {result.returncode}: {last[:300]}")
        else:
            info = json.loads(line[len(MARKER) :])
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        info = _fallback(f"fingerprint snippet failed: {error}")
    finally:
        shutil.rmtree(Path(folder), ignore_errors=True)
    for name in names:
        info.setdefault("packages", {}).setdefault(name, None)
    info["driver"] = driver_version() if info.get("cuda_available") else None
    info["key"] = environment_key(info)
    return info
