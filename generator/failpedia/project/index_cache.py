"""A checkout's compiled index, kept in the user's cache (``$XDG_CACHE_HOME/failpedia``,
else ``~/.cache/failpedia``) so that ``diagnose``, ``run`` and ``explain`` do not compile
the catalog on every call.

The index is keyed by the bytes of what it is built from (each entry's ``entry.yaml`` and
reproducer, ``categories.yaml``, ``retired.yaml``, ``mkdocs.yml``, the names the site
reserves), the package version and its compiler's modules. Reading those bytes again on
every call would grow with the catalog, so each file's digest is kept beside its size
and modification time (``stat_digests``) and read again only when either changed, or
when it changed too recently for its time to tell.

Where the key is new, the catalog is checked quickly (``check_catalog(quick=True)``: no
reproducer review, no healthy-log check; ``validate`` and CI do those) and each entry
file's check is reused from the cache while its own bytes, its folder's scripts and what
the check knows of the catalog are unchanged, so one edited entry is checked alone.
Files are written whole or not at all; a cache that is corrupt, unreadable or cannot be
written is rebuilt, or skipped, without a word.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import failpedia
from failpedia.settings import CONFIG_FILE, ProjectSettings
from failpedia.signatures.hyperscan_form import cache_dir, trusted_before_ns, write_cache
from failpedia.signatures.index_format import ENTRIES_FILE, INDEX_FILE, IndexFile
from failpedia.signatures.nearest_rules import NEAREST_FILE

if TYPE_CHECKING:  # the catalog is loaded only where the cache has no index
    from failpedia.catalog.entry_check import EntryChecks

CACHE_FORMAT = "2"
META_FILE = "meta.json"  # written last: its presence says the folder is whole
# The package modules whose code shapes the index (a checkout's may be edited).
COMPILER_PARTS = ("catalog", "signatures")
PACKAGE_DIR = Path(failpedia.__file__).resolve().parent


@dataclass(frozen=True)
class CachedIndex:
    """A compiled index in the cache: its folder, and the entries left out of it."""

    folder: Path
    index: IndexFile  # read, and checked against the digest written with it
    left_out: tuple[str, ...]  # ids of entry folders left out for their problems
    warning: str | None  # the one warning about them, printed on every call

    def file(self, name: str) -> Path:
        return self.folder / name


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _is_input(name: str) -> bool:
    return name == "entry.yaml" or name.endswith(".py")


def input_files(
    settings: ProjectSettings, folders: dict[str, list[object]], trusted_before: float
) -> list[str]:
    """What the index is built from: the registries, each entry folder's ``entry.yaml``
    and Python files (its reproducer), and ``mkdocs.yml`` (the URLs).

    An entry folder's names are listed again only where its time changed (adding,
    removing or renaming a file changes it) or is not older than ``trusted_before``;
    ``folders`` holds the last listing of each, and is updated here. Paths are strings:
    ``pathlib`` would cost more than the system calls at thousands of entries."""
    entries_dir = str(settings.entries_dir)
    join = os.path.join
    files = [join(settings.root, CONFIG_FILE), join(entries_dir, "categories.yaml")]
    files.append(join(entries_dir, "retired.yaml"))
    listed: dict[str, list[object]] = {}
    try:
        categories = sorted(item.path for item in os.scandir(entries_dir) if item.is_dir())
    except OSError:
        categories = []
    for category in categories:
        try:
            entries = sorted(
                (item.path, item.stat().st_mtime_ns)
                for item in os.scandir(category)
                if item.is_dir()
            )
        except OSError:
            continue
        for folder, mtime in entries:
            old = folders.get(folder)
            kept = old[1] if isinstance(old, list) and len(old) == 2 and old[0] == mtime else None
            if (
                mtime < trusted_before
                and isinstance(kept, list)
                and all(type(n) is str for n in kept)
            ):
                names: list[str] = kept
            else:
                try:
                    names = sorted(name for name in os.listdir(folder) if _is_input(name))
                except OSError:
                    continue
            listed[folder] = [mtime, names]
            prefix = folder + os.sep
            files += [prefix + name for name in names]
    folders.clear()
    folders.update(listed)
    return files


def file_stats(files: list[str]) -> list[list[int]]:
    """``[size, modification time]`` of each file, ``[-1, -1]`` where it cannot be read:
    lists, as the manifest's JSON reads them back, so the two compare as they are."""
    found = []
    for name in files:
        try:
            stat = os.stat(name)
        except OSError:
            found.append([-1, -1])
            continue
        found.append([stat.st_size, stat.st_mtime_ns])
    return found


def file_digests(
    files: list[str],
    stats: list[list[int]],
    known: dict[str, list[object]],
    trusted_before: float,
) -> list[str]:
    """The digest of each file's bytes ("missing" where it cannot be read), read again
    only where its size or time differs from ``known`` (``path: [size, time, digest]``)
    or is not older than ``trusted_before``."""
    digests = []
    for name, (size, mtime) in zip(files, stats, strict=True):
        old = known.get(name)
        if size < 0:
            digest = "missing"
        elif (
            isinstance(old, list)
            and len(old) == 3
            and old[0] == size
            and old[1] == mtime
            and mtime < trusted_before
        ):
            digest = str(old[2])
        else:
            try:
                with open(name, "rb") as handle:
                    digest = _digest(handle.read())
            except OSError:
                digest = "missing"
        digests.append(digest)
    return digests


def _compiler_identity() -> str:
    """The package version and the size and time of the modules that compile the index."""
    parts = [failpedia.__version__, CACHE_FORMAT]
    for part in COMPILER_PARTS:
        for path in sorted((PACKAGE_DIR / part).glob("*.py")):
            stat = path.stat()
            parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def project_key(settings: ProjectSettings) -> str:
    """The cache key of a project's index: its inputs' bytes and the compiler's identity.

    The manifest kept for the project holds the last listing of each entry folder, each
    input's size, time and digest, and the key they made. Where every size and time is
    as it was and none is recent, that key is the answer: a warm call costs a ``stat``
    of each entry folder and input and nothing read but the manifest."""
    where = _digest(str(settings.entries_dir).encode())
    manifest = cache_dir() / "stat" / f"{where}.json"
    head = [_compiler_identity(), str(settings.root), str(settings.entries_dir)]
    try:
        head.append(" ".join(sorted(os.listdir(settings.docs_dir))))  # reserved names
    except OSError:
        head.append("")
    try:
        kept = json.loads(manifest.read_bytes())
        folders, files, stats = kept["folders"], kept["files"], kept["stats"]
        digests, key = kept["digests"], kept["key"]
        if not (
            isinstance(folders, dict)
            and isinstance(files, list)
            and isinstance(stats, list)
            and isinstance(digests, list)
            and len(files) == len(stats) == len(digests)
            and isinstance(key, str)
        ):
            raise TypeError
        same_head = kept["head"] == head
        known = {
            name: [*stat, digest] for name, stat, digest in zip(files, stats, digests, strict=True)
        }
    except (OSError, ValueError, KeyError, TypeError):
        folders, files, stats, key, same_head, known = {}, [], [], "", False, {}
    trusted_before = trusted_before_ns()
    now_files = input_files(settings, folders, trusted_before)
    now_stats = file_stats(now_files)
    newest = max((mtime for _, mtime in now_stats), default=0)
    unchanged = same_head and now_files == files and now_stats == stats
    if unchanged and key and newest < trusted_before:
        return key
    now_digests = file_digests(now_files, now_stats, known, trusted_before)
    lines = head + [f"{name} {digest}" for name, digest in zip(now_files, now_digests, strict=True)]
    key = _digest("\n".join(lines).encode())
    kept = {
        "head": head,
        "folders": folders,
        "files": now_files,
        "stats": now_stats,
        "digests": now_digests,
        "key": key,
    }
    write_cache(manifest, json.dumps(kept, separators=(",", ":")).encode())
    return key


def read_cached(key: str) -> CachedIndex | None:
    """The index cached under ``key``, or None where it is not whole: a file missing, of
    another size than was written, or (the index itself) with other bytes."""
    folder = cache_dir() / "index" / key
    try:
        meta = json.loads((folder / META_FILE).read_bytes())
        read = IndexFile(str(folder / INDEX_FILE), (folder / INDEX_FILE).read_bytes())
        # The digest that checks the file is the one diagnose keys its compiled probes by:
        # the index is hashed once per call.
        index = read._replace(known_digest=read.digest)
        if index.known_digest != meta["index_digest"]:
            return None
        for name, size in meta["sizes"].items():
            if (folder / name).stat().st_size != size:
                return None
        left_out = tuple(str(item) for item in meta["left_out"])
        warning = meta["warning"]
        return CachedIndex(folder, index, left_out, warning if isinstance(warning, str) else None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_index(
    key: str, files: dict[str, bytes], left_out: list[str], warning: str | None
) -> CachedIndex:
    """Write the compiled files under ``key`` (the meta file last)."""
    folder = cache_dir() / "index" / key
    for name in (INDEX_FILE, ENTRIES_FILE, NEAREST_FILE):
        if name in files:
            write_cache(folder / name, files[name])
    meta = {
        "left_out": left_out,
        "warning": warning,
        "index_digest": IndexFile(INDEX_FILE, files[INDEX_FILE]).digest,
        "sizes": {name: len(data) for name, data in files.items()},
    }
    write_cache(folder / META_FILE, json.dumps(meta).encode())
    index = IndexFile(str(folder / INDEX_FILE), files[INDEX_FILE])
    return CachedIndex(folder, index, tuple(left_out), warning)


def entry_key(path: Path, data: bytes, root: Path | None, checks: EntryChecks) -> str:
    """The cache key of one entry file's check: its bytes, its folder's scripts, what the
    check knows of the catalog (sorted: a set's order changes from one process to the
    next), and the compiler's identity."""
    known = (
        str(checks.entries_dir),
        sorted(checks.category_ids),
        checks.reserved,
        checks.review_reproducer,
    )
    lines = [_compiler_identity(), str(path), str(root), repr(known), _digest(data)]
    for script in sorted(path.parent.glob("*.py")):
        try:
            lines.append(f"{script.name} {_digest(script.read_bytes())}")
        except OSError:
            lines.append(f"{script.name} missing")
    return _digest("\n".join(lines).encode())


def load_entry(key: str) -> object | None:
    """A cached entry check (written by this package, in this user's cache), or None."""
    try:
        loaded: object = pickle.loads((cache_dir() / "entries" / f"{key}.pickle").read_bytes())
        return loaded
    except Exception:  # noqa: BLE001 - a corrupt or foreign cache file is only a miss
        return None


def store_entry(key: str, checked: object) -> None:
    try:
        data = pickle.dumps(checked, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - what cannot be pickled is checked again next time
        return
    write_cache(cache_dir() / "entries" / f"{key}.pickle", data)
