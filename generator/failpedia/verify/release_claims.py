"""Release claims against the releases the catalog installs, so a new pin that changes a
wording fails a check instead of leaving a page wrong.

A signature's ``releases`` ranges say which releases of a package emit its wording. The
catalog installs torch and the packages reproducers pin (``failpedia requirements``);
this module checks each range against the release installed here (refusing one that
differs from the pin), using the evidence that release leaves:

- a verification record made under that release whose broken mode printed the
  signature (``verification/<id>.json``): it emits the wording;
- ``source_text`` among the package's installed files (its Python source and compiled
  libraries): found, the release still holds the wording; not found, it does not.

A range that covers the installed release needs either; one that does not cover it needs
``source_text`` absent and no record under it showing the wording. Messages that only a
build the catalog does not install prints (a CUDA build's libraries, for instance) cannot
be checked here: such claims stay prose in ``emitted_by``.
"""

from __future__ import annotations

import importlib.metadata
import mmap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.catalog.model import ReleaseRange
from failpedia.catalog.release_rules import covers, describe, release_tuple
from failpedia.verify.results import load_record

# The package every reproducer runs on, installed by the catalog's setup (scripts/test.sh).
TORCH = "torch"
# Files of a distribution whose bytes hold its messages: Python source and compiled code.
MESSAGE_FILE_SUFFIXES = (".py", ".so", ".pyd", ".dylib", ".dll")


@dataclass(frozen=True)
class ClaimResult:
    """One range checked against the installed release: whether it holds, and why."""

    entry: CatalogEntry
    signature: int
    range_index: int
    claim: ReleaseRange
    installed: str | None
    holds: bool
    reason: str

    @property
    def field(self) -> str:
        return f"signatures[{self.signature}].releases[{self.range_index}]"


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def catalog_pins(catalog: Catalog) -> dict[str, str]:
    """The release each package is pinned at by the reproducers that declare it."""
    pins: dict[str, str] = {}
    for item in catalog.entries:
        if item.entry.reproducer is None:
            continue
        for requirement in item.entry.reproducer.requirements:
            name, _, version = requirement.partition("==")
            pins[_normalise(name)] = version.strip()
    return pins


def installed_version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _message_files(package: str) -> list[Path]:
    try:
        files = importlib.metadata.distribution(package).files or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [
        Path(str(file.locate()))
        for file in files
        if str(file).endswith(MESSAGE_FILE_SUFFIXES) and "__pycache__" not in str(file)
    ]


def find_source_texts(package: str, texts: Iterable[str]) -> set[str]:
    """Those of ``texts`` that some installed file of ``package`` holds, as UTF-8 bytes."""
    wanted = {text: text.encode("utf-8") for text in texts}
    found: set[str] = set()
    for path in _message_files(package):
        if len(found) == len(wanted):
            break
        try:
            with (
                path.open("rb") as handle,
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
            ):
                found.update(
                    text
                    for text, needle in wanted.items()
                    if text not in found and data.find(needle) != -1
                )
        except (OSError, ValueError):  # unreadable, or empty (mmap refuses length 0)
            continue
    return found


def _record_version(result: Mapping[str, Any], package: str) -> str | None:
    environment = result.get("environment")
    if not isinstance(environment, dict):
        return None
    if _normalise(package) == TORCH:
        value = environment.get("torch")
    else:
        packages = environment.get("packages")
        value = None
        if isinstance(packages, dict):
            value = next(
                (v for k, v in packages.items() if _normalise(str(k)) == _normalise(package)),
                None,
            )
    return value if isinstance(value, str) else None


def _record_shows(
    results: list[dict[str, Any]], package: str, installed: str, signature: int
) -> bool:
    """Whether a record made under the installed release printed the signature."""
    release = release_tuple(installed)
    for result in results:
        version = _record_version(result, package)
        if version is None or release_tuple(version) != release:
            continue
        broken = result.get("broken")
        lines = broken.get("matched_lines") if isinstance(broken, dict) else None
        if isinstance(lines, list) and any(
            isinstance(line, dict) and line.get("signature") == signature for line in lines
        ):
            return True
    return False


def check_release_claims(catalog: Catalog, records_dir: Path) -> list[ClaimResult]:
    """Every ``releases`` range of the catalog checked against the installed release."""
    pins = catalog_pins(catalog)
    claims = [
        (item, index, number, claim)
        for item in catalog.entries
        for index, signature in enumerate(item.entry.signatures)
        for number, claim in enumerate(signature.releases)
    ]
    texts: dict[str, set[str]] = {}
    for _, _, _, claim in claims:
        if claim.source_text is not None:
            texts.setdefault(_normalise(claim.package), set()).add(claim.source_text)
    found = {package: find_source_texts(package, wanted) for package, wanted in texts.items()}
    records: dict[str, list[dict[str, Any]]] = {}
    results = []
    for item, index, number, claim in claims:
        if item.entry.id not in records:
            data, _ = load_record(records_dir, item.entry.id)
            records[item.entry.id] = list(data["results"]) if data else []
        holds, reason, installed = _judge(
            claim, index, pins, records[item.entry.id], found.get(_normalise(claim.package), set())
        )
        results.append(ClaimResult(item, index, number, claim, installed, holds, reason))
    return results


def _judge(
    claim: ReleaseRange,
    signature: int,
    pins: Mapping[str, str],
    results: list[dict[str, Any]],
    found_texts: set[str],
) -> tuple[bool, str, str | None]:
    """Whether one range holds for the installed release, the reason, and that release."""
    package = _normalise(claim.package)
    claimed = describe(claim)
    if package != TORCH and package not in pins:
        return (
            False,
            f"the catalog does not install {claim.package} (only torch and the packages "
            "reproducers pin), so no check can hold this claim; keep it in `emitted_by` "
            "alone",
            None,
        )
    installed = installed_version(claim.package)
    pin = pins.get(package)
    if installed is None:
        wanted = claim.package if pin is None else f"{claim.package}=={pin}"
        return False, f"{claim.package} is not installed here; install {wanted}", None
    if pin is not None and release_tuple(pin) != release_tuple(installed):
        return (
            False,
            f"{claim.package} {installed} is installed but the catalog pins {pin}; "
            "install the pins (`failpedia requirements`) to check claims",
            installed,
        )
    shown = _record_shows(results, claim.package, installed, signature)
    source_text = claim.source_text
    held = source_text in found_texts if source_text is not None else None
    where = f"{claim.package} {installed}"
    if covers(claim, installed):
        if shown:
            return True, f"{claimed}: the record under {where} shows it", installed
        if held:
            return True, f"{claimed}: {where} holds `{source_text}`", installed
        if held is False:
            return (
                False,
                f"{claimed}, but {where} holds no `{source_text}`: find the release that "
                "changed the wording, set `last` and say so in `emitted_by`",
                installed,
            )
        return (
            False,
            f"{claimed}, but nothing shows that {where} emits it: no verification record "
            f"under {installed} printed signature {signature}; give `source_text` or "
            "prove the reproducer on it",
            installed,
        )
    if shown:
        return (
            False,
            f"{claimed}, but the record under {where} shows it: extend the range",
            installed,
        )
    if held:
        return (
            False,
            f"{claimed}, but {where} still holds `{source_text}`: extend the range "
            "(`last`) and `emitted_by`",
            installed,
        )
    if held is False:
        return True, f"{claimed}: {where} holds no `{source_text}`", installed
    return (
        False,
        f"{claimed} leaves out the installed {where}; give `source_text` so the check can "
        "tell that it no longer emits the wording",
        installed,
    )
