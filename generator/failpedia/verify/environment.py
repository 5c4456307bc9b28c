"""What the machine offers reproducers, which ones it cannot run, and the clean
environment every reproducer starts from."""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from failpedia.catalog.catalog import CatalogEntry
from failpedia.verify.results import SKIPPED, VerificationResult, now_iso

GPU_DEVICES = frozenset({"cuda", "multi-gpu"})
# Where ``reproducer.private_requirements`` live, under the interpreter's prefix: the
# sandbox shows that prefix to every reproducer, and no path entry points into it.
PRIVATE_PACKAGES = "failpedia-private"


@dataclass(frozen=True)
class Capabilities:
    """What the machine offers reproducers, determined once per run."""

    cuda: bool = False
    gpu_count: int = 0
    packages: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def from_fingerprint(cls, environment: Mapping[str, Any]) -> Capabilities:
        return cls(
            cuda=bool(environment.get("cuda_available")),
            gpu_count=int(environment.get("gpu_count") or 0),
            packages=dict(environment.get("packages") or {}),
        )

    def installed_version(self, name: str) -> str | None:
        if name in self.packages:
            return self.packages[name]
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None


def requirement_names(requirements: Iterable[str]) -> list[str]:
    return [requirement.split("==", 1)[0].strip() for requirement in requirements]


def same_version(installed: str, wanted: str) -> bool:
    """Whether two version strings name one release (``2.0`` and ``2.0.0`` do)."""
    if installed == wanted:
        return True
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pragma: no cover - packaging ships with pip and setuptools
        return False
    try:
        return Version(installed) == Version(wanted)
    except InvalidVersion:
        return False


def missing_device(item: CatalogEntry, capabilities: Capabilities) -> str | None:
    """Why this machine lacks the device the entry's reproducer needs, or None."""
    reproducer = item.reproducer
    if reproducer.device == "cuda" and not capabilities.cuda:
        return "needs a GPU (device: cuda); torch.cuda.is_available() is false here"
    if reproducer.device == "multi-gpu" and (not capabilities.cuda or capabilities.gpu_count < 2):
        found = capabilities.gpu_count if capabilities.cuda else 0
        return f"needs 2 or more GPUs (device: multi-gpu); found {found}"
    return None


def skip_reason(item: CatalogEntry, capabilities: Capabilities) -> str | None:
    """Why this machine cannot run the entry's reproducer, or None when it can."""
    missing = missing_device(item, capabilities)
    if missing is not None:
        return missing
    for requirement in item.reproducer.requirements:
        name, _, wanted = requirement.partition("==")
        installed = capabilities.installed_version(name.strip())
        if installed is None:
            return f"requires {requirement}; {name} is not installed"
        if not same_version(installed, wanted.strip()):
            return f"requires {requirement}; {name} {installed} is installed"
    for requirement in item.reproducer.private_requirements:
        folder = private_folder(requirement)
        if private_version(requirement) is None:
            return (
                f"requires {requirement} installed apart in {folder}; "
                "`failpedia requirements --private` lists the folders to install into"
            )
    return None


def private_folder(requirement: str, prefix: str = sys.prefix) -> Path:
    """The folder a ``name==version`` of ``reproducer.private_requirements`` is installed
    in (``pip install --no-deps --target FOLDER name==version``): its own, so two
    releases of one package can stay side by side, and on no ``sys.path`` until a
    reproducer puts it there."""
    name, _, version = requirement.partition("==")
    return Path(prefix) / PRIVATE_PACKAGES / f"{name.strip()}-{version.strip()}"


def private_version(requirement: str, prefix: str = sys.prefix) -> str | None:
    """The release installed in the requirement's private folder when it is the pinned
    one, else None."""
    name, _, wanted = requirement.partition("==")
    folder = private_folder(requirement, prefix)
    if not folder.is_dir():
        return None
    for distribution in importlib.metadata.distributions(path=[str(folder)]):
        found = distribution.metadata["Name"] or ""
        if _canonical(found) == _canonical(name) and same_version(
            distribution.version, wanted.strip()
        ):
            return distribution.version
    return None


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def skipped_result(item: CatalogEntry, reason: str) -> VerificationResult:
    return VerificationResult(
        entry=item.entry.id,
        verdict=SKIPPED,
        reason=reason,
        device=item.reproducer.device,
        started_at=now_iso(),
        timeout=item.reproducer.timeout,
    )


def clean_environment(folder: str | os.PathLike[str]) -> dict[str, str]:
    """The environment a reproducer runs in: nothing of the caller's but PATH and locale.

    ``TORCH_*`` and other settings of the user's shell do not leak in; HOME and TMPDIR
    point at the reproducer's own temporary folder.
    """
    folder = os.fspath(folder)
    env = {
        "PATH": os.environ.get("PATH") or os.defpath,
        "HOME": folder,
        "TMPDIR": folder,
        "PYTHONNOUSERSITE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    }
    for name in ("LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env
