"""The log page's worker and ``failpedia diagnose`` read lines and match patterns alike.

Every catalog pattern and generated ones run through both engines, the page's worker in
Node (``worker_engine.js``) and Python, on the same lines: the catalog's own signature
texts and variants of them with non-ASCII and non-BMP characters around and inside the
match, at the line cap, beside lone surrogates and exotic whitespace. Both must cut the
lines into the same segments and find the same match spans, counted in code points.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from failpedia.catalog.validate import load_catalog
from failpedia.diagnose.exact import ExactPattern
from failpedia.signatures.dialect import PatternError, compile_pattern
from failpedia.signatures.finding_order import published_finding_order
from failpedia.signatures.line_rules import (
    LINE_CAP,
    PREFIX_RULES,
    RANK_PART,
    TIME_PARTS,
    published_rules,
    split_line,
)
from helpers import REPO_ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

HARNESS = Path(__file__).with_name("worker_engine.js")
SMILE = "\U0001f600"  # outside the BMP: two UTF-16 units, one code point
FRAKTUR_U = "\U0001d518"  # a letter outside the BMP: not a word character to either engine


class WorkerEngine:
    """One Node process running the worker, asked one request at a time."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            pytest.fail("node is missing: install Node.js (scripts/test.sh does)")
        self.process = subprocess.Popen(
            [node, str(HARNESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def ask(self, patterns: list[str], lines: list[str]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {
            "rules": published_rules(),
            "order": published_finding_order(),
            "patterns": patterns,
            "lines": lines,
        }
        self.process.stdin.write(json.dumps(request) + "\n")  # ASCII: surrogates escaped
        self.process.stdin.flush()
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert "error" not in reply, reply.get("error")
        return reply

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def worker() -> Iterator[WorkerEngine]:
    engine = WorkerEngine()
    yield engine
    engine.close()


def python_answer(patterns: list[str], lines: list[str]) -> dict[str, Any]:
    """What the worker answers, from Python: segments, then spans per pattern and line,
    each pattern compiled as ``failpedia diagnose`` compiles it."""
    segments = [[segment.text for segment in split_line(line)] for line in lines]
    spans = []
    for canonical in patterns:
        exact = ExactPattern(canonical)
        spans.append(
            [
                [list(found) if (found := exact.search(text)) else None for text in texts]
                for texts in segments
            ]
        )
    return {"segments": segments, "spans": spans}


def variants(text: str) -> list[str]:
    """A line as it was emitted, and as logs mangle it: non-ASCII and non-BMP characters
    around and inside it, at the line cap, lone surrogates, exotic whitespace, prefixes."""
    spaced = text.replace(" ", f" {SMILE} ", 1)
    return [
        text,
        SMILE + text,
        text + SMILE,
        spaced,
        text.replace(" ", "\u00e9", 1),
        text.replace(" ", SMILE, 1),
        FRAKTUR_U * 3 + text + FRAKTUR_U,
        "\ud83d" + text + "\ude00",
        "\u00a0" + text + "\u00a0",
        "\x1c\r" + text + "\r\ufeff",
        "[rank3]:\u2003" + text,
        "[rank3]: " + "\U0001f4a5" * 2 + " " + text,
    ]


def capped_variants(text: str) -> list[str]:
    """The line where the cap falls: inside it, on a surrogate pair, after a run of them."""
    return [
        "x" * (LINE_CAP - len(text) // 2) + text,
        SMILE * (LINE_CAP - 2) + text,
        "a" * (LINE_CAP - 1) + SMILE + text,
        SMILE * (LINE_CAP // 2) + text,
        text + SMILE * LINE_CAP,
    ]


def assert_agree(worker: WorkerEngine, patterns: list[str], lines: list[str]) -> None:
    expected = python_answer(patterns, lines)
    got = worker.ask(patterns, lines)
    assert got["segments"] == expected["segments"]
    for pattern, mine, theirs in zip(patterns, expected["spans"], got["spans"], strict=True):
        assert theirs is not None, f"the worker cannot compile {pattern!r}"
        for line, one, two in zip(lines, mine, theirs, strict=True):
            assert one == two, (pattern, line[:120])


@pytest.mark.slow
def test_catalog_patterns_read_and_match_alike(worker: WorkerEngine) -> None:
    catalog, problems = load_catalog(REPO_ROOT / "entries", REPO_ROOT)
    assert not list(problems)
    everyone = [pattern.canonical for item in catalog.entries for pattern in item.patterns]
    texts = {
        item.entry.id: [
            line
            for signature in item.entry.signatures
            for line in signature.text.splitlines()
            if line.strip()
        ]
        for item in catalog.entries
    }
    lines = [line for own in texts.values() for text in own for line in variants(text)]
    assert_agree(worker, everyone, lines)  # every pattern on every line: no false matches
    for item in catalog.entries:  # each entry's own texts, where the cap falls
        own = [pattern.canonical for pattern in item.patterns]
        capped = [line for text in texts[item.entry.id] for line in capped_variants(text)]
        assert_agree(worker, own, capped)


ALPHABET = list("FooErr: widget count0123456789_-.") + [
    "\u00e9",
    "\u00df",
    SMILE,
    FRAKTUR_U,
    "\U0001d7d8",  # a digit outside the BMP: not a digit to either engine
    "\u2028",
    "\t",
    "\ud83d",
]
UNICODE_PIECES = [
    "\\w",
    "\\W",
    "\\d",
    "\\D",
    "\\s",
    "\\S",
    "\\b",
    "\\B",
    ".",
    "[^x]",
    "[a-z\u00e9]",
    f"[{SMILE}-\U0001f64f]",
    f"[^{SMILE}]",
    f"[\u00e0-{SMILE}]",
    SMILE,
    FRAKTUR_U,
    "\u00e9",
    "(?:\u00e9|" + SMILE + ")",
    "(?:ab|\u00df)",
]
UNICODE_QUANTIFIERS = ["", "", "?", "+", "*", "{2}", "{1,3}", "??"]
ZERO_WIDTH = ("\\b", "\\B")
CORES = ["FooError: ", "Err\u00f6r " + SMILE + ": ", "widget count"]


PIECE = st.tuples(st.sampled_from(UNICODE_PIECES), st.sampled_from(UNICODE_QUANTIFIERS)).map(
    lambda pair: pair[0] if pair[0] in ZERO_WIDTH else "".join(pair)
)


@st.composite
def unicode_patterns(draw: st.DrawFn) -> str:
    """Patterns of every construct the dialect allows, with non-BMP characters in
    literals, classes and ranges, around a literal core."""
    before = "".join(draw(st.lists(PIECE, max_size=4)))
    after = "".join(draw(st.lists(PIECE, max_size=4)))
    return before + draw(st.sampled_from(CORES)) + after


@st.composite
def lines_for(draw: st.DrawFn, core: str) -> list[str]:
    """Lines around a pattern's core, and without it, of ASCII, non-ASCII, non-BMP and
    lone surrogate characters."""
    text = st.text(st.sampled_from(ALPHABET), max_size=20)
    made = draw(st.lists(st.tuples(text, text), min_size=1, max_size=6))
    return [before + core + after for before, after in made] + draw(st.lists(text, max_size=3))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_generated_patterns_read_and_match_alike(worker: WorkerEngine, data: st.DataObject) -> None:
    source = data.draw(unicode_patterns())
    try:
        compiled = compile_pattern(source)
    except PatternError:
        return
    core = next(core for core in CORES if core in source)
    lines = data.draw(lines_for(core))
    assert_agree(worker, [compiled.canonical], lines + capped_variants(lines[0]))


def test_a_pattern_the_browser_cannot_compile_is_skipped_alone(worker: WorkerEngine) -> None:
    """One broken pattern in the index costs that pattern only, not the others."""
    good = compile_pattern("FooError: widget \\d+").canonical
    reply = worker.ask(["FooError: (?<", good], ["FooError: widget 12"])
    assert reply["spans"] == [None, [[[0, 19]]]]


def test_every_prefix_group_says_what_it_reads() -> None:
    """Each prefix rule names what each of its groups reads, in a word both engines know:
    a rank, or a part of a time that has at least its month to its second."""
    required = {"month", "day", "hour", "minute", "second"}
    for name, source, groups in PREFIX_RULES:
        assert re.compile(source).groups == len(groups), name
        assert set(groups) <= {RANK_PART, *TIME_PARTS}, name
        if set(groups) & set(TIME_PARTS):
            assert required <= set(groups) and RANK_PART not in groups, name
