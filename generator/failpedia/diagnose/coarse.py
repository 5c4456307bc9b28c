"""Find candidate lines in a block of log bytes, fast: the first, coarse pass of diagnosis.

A probe is a regular expression (a signature's canonical pattern) or a literal keyword.
An engine reports, for a block of bytes, positions where a probe may match. It may report
more than the exact matches (the caller checks each candidate line with the exact
pattern) but never fewer: every line the exact patterns match must show up.

``HyperscanEngine`` compiles every probe into one Hyperscan database, a DFA-style
matcher that scans the block once, in linear time, for all probes together; a first,
faster pass looks only for the probes' required literals, with a second Hyperscan
database. Where
Hyperscan is not installed (it ships wheels for x86-64 Linux and macOS), ``LiteralEngine``
finds each probe's required literal text with ``bytes.find``: correct, much slower.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from failpedia.signatures.hyperscan_form import (
    FORM_VERSION,
    cache_dir,
    hyperscan_form,
    write_cache,
)

# A literal pass: a block's literal hits as ``Engine.find`` gives them.
LiteralPass = Callable[[bytes | memoryview], list[tuple[int, int]]]


class Probe(NamedTuple):
    """What to look for: a canonical pattern (``regex``) or literal texts, any of which;
    ``number`` is what an engine reports for it (numbers need not be consecutive)."""

    regex: str | None
    literals: tuple[str, ...]
    number: int


class Engine:
    name = "engine"

    def find(self, block: bytes | memoryview) -> list[tuple[int, int]]:
        """``(position, probe number)`` pairs; ``position`` lies inside the candidate match."""
        raise NotImplementedError


class LiteralEngine(Engine):
    """Reports every occurrence of any of a probe's literals."""

    name = "literal"

    def __init__(self, probes: Sequence[Probe]) -> None:
        self.needles: list[tuple[bytes, int]] = []
        seen: set[tuple[bytes, int]] = set()
        for probe in probes:
            for literal in probe.literals:
                needle = (literal.encode("utf-8"), probe.number)
                if needle[0] and needle not in seen:
                    seen.add(needle)
                    self.needles.append(needle)

    def find(self, block: bytes | memoryview) -> list[tuple[int, int]]:
        block = bytes(block)
        found = []
        for needle, index in self.needles:
            position = block.find(needle)
            while position != -1:
                found.append((position, index))
                position = block.find(needle, position + 1)
        return found


def _cache_key(hyperscan: Any, identity: str) -> str:
    """The name of a probe set's cached databases: the set, this module's forms and the
    Hyperscan version."""
    text = f"{FORM_VERSION} {getattr(hyperscan, '__version__', '')}\0{identity}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _read_database(hyperscan: Any, path: Path) -> Any | None:
    """The database cached at ``path``; None if there is none, or it is stale or foreign
    (it is then compiled again)."""
    try:
        return hyperscan.loadb(path.read_bytes(), hyperscan.HS_MODE_BLOCK)
    except Exception:  # noqa: BLE001 - missing, unreadable, another Hyperscan's format
        return None


class HyperscanEngine(Engine):
    """A Hyperscan block-mode database of the whole patterns and a literal pass before
    it, both cached on disk once compiled.

    The literal pass looks for each probe's required literals, and is two to three times
    faster than the database of whole patterns for the project's signatures (for
    thousands of signatures the two databases scan alike, about 3 GB/s on one core of the
    benchmark machine). A block where the literals fire at most ``LITERAL_HITS`` times is
    answered from them alone (the caller checks each candidate line exactly, and a few
    extra candidates cost less than a second scan); a block where they fire more often
    (near-misses of real messages, repeated warnings) is scanned again with the whole
    patterns, so only lines that can match go on.
    """

    name = "hyperscan"
    LITERAL_HITS = 32

    def __init__(
        self, probes: Sequence[Probe], use_cache: bool = True, identity: str | None = None
    ) -> None:
        import hyperscan

        self._hs = hyperscan
        self._use_cache = use_cache
        # The probes name the cache files, unless the caller names the probe set itself
        # (``identity``): then the files can be found before the probes are built.
        key = _cache_key(
            hyperscan,
            identity
            if identity is not None
            else "\0".join(
                f"{probe.number}\3r{probe.regex}\2" + "\1".join(probe.literals) for probe in probes
            ),
        )
        # The Hyperscan forms are only needed when a database has to be compiled.
        numbers = [probe.number for probe in probes]
        self.database = self._database(
            f"hs-{key}.db",
            lambda: [
                hyperscan_form(probe.regex)
                if probe.regex is not None
                else _literal_form(probe.literals)
                for probe in probes
            ],
            numbers,
        )
        self._scratch = threading.local()  # Hyperscan scratch space serves one scan at a time
        self.find_literals: LiteralPass | None
        self.find_literals = None
        # Every pattern has a required literal in each branch (the validator sees to it);
        # a probe without one would make the literal pass miss its lines.
        if all(probe.literals for probe in probes):
            self.find_literals = self._literal_pass(key, probes)

    @classmethod
    def cached(cls, identity: str) -> HyperscanEngine | None:
        """The engine compiled earlier for the probe set named ``identity``, read from the
        cache without the probes; None if it is not there (or Hyperscan is not)."""
        try:
            import hyperscan
        except ImportError:
            return None
        key = _cache_key(hyperscan, identity)
        database = _read_database(hyperscan, cache_dir() / f"hs-{key}.db")
        if database is None:
            return None
        engine = cls.__new__(cls)
        engine._hs, engine._use_cache, engine.database = hyperscan, True, database
        engine._scratch = threading.local()
        # Absent where some probe has no literal: the whole patterns are scanned alone.
        engine.find_literals = None
        literals = _read_database(hyperscan, cache_dir() / f"hs-literals-{key}.db")
        if literals is not None:
            engine.find_literals = engine._hyperscan_literals(literals)
        return engine

    def _literal_pass(self, key: str, probes: Sequence[Probe]) -> LiteralPass:
        """A Hyperscan database of the probes' literals."""
        return self._hyperscan_literals(
            self._database(
                f"hs-literals-{key}.db",
                lambda: [_literal_form(probe.literals) for probe in probes],
                [probe.number for probe in probes],
            )
        )

    def _hyperscan_literals(self, database: Any) -> LiteralPass:
        return lambda block: self._scan(database, block)

    def _database(
        self, filename: str, expressions: Callable[[], list[bytes]], numbers: list[int]
    ) -> Any:
        hyperscan = self._hs
        cached = cache_dir() / filename
        if self._use_cache:
            database = _read_database(hyperscan, cached)
            if database is not None:
                return database
        forms = expressions()
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(expressions=forms, ids=numbers)
        if self._use_cache:
            write_cache(cached, hyperscan.dumpb(database))
        return database

    def _scan(self, database: Any, block: bytes | memoryview) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        append = found.append

        def on_match(index: int, start: int, end: int, flags: int, context: object) -> None:
            append((end - 1, index))

        spaces = getattr(self._scratch, "spaces", None)
        if spaces is None:
            spaces = self._scratch.spaces = {}
        scratch = spaces.get(id(database))
        if scratch is None:
            scratch = spaces[id(database)] = self._hs.Scratch(database)
        database.scan(block, match_event_handler=on_match, scratch=scratch)
        return found

    def find(self, block: bytes | memoryview) -> list[tuple[int, int]]:
        if self.find_literals is not None:
            found = self.find_literals(block)
            if len(found) <= self.LITERAL_HITS:
                return found
        return self._scan(self.database, block)


def _literal_form(literals: Sequence[str]) -> bytes:
    return b"|".join(re.escape(literal).encode("utf-8") for literal in literals)


def make_engine(
    probes: Sequence[Probe], prefer: str | None = None, identity: str | None = None
) -> tuple[Engine, str | None]:
    """The fastest engine available and, when it is not Hyperscan, a warning saying why.
    ``identity`` names the probe set in the cache (see ``HyperscanEngine.cached``)."""
    if prefer != "literal":
        try:
            return HyperscanEngine(probes, identity=identity), None
        except ImportError:
            reason = "the hyperscan package is not installed on this platform"
        except Exception as error:  # noqa: BLE001 - any compile failure falls back
            reason = f"hyperscan could not compile the signatures ({error})"
        if prefer == "hyperscan":
            raise RuntimeError(reason)
        return LiteralEngine(probes), (f"{reason}; matching with the slower pure-Python engine")
    return LiteralEngine(probes), None
