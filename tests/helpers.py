"""Shared helpers for the CLI tests: run ``failpedia`` on copies of a tiny fixture project.

``tests/fixtures/mini`` holds two categories and three small valid entries whose
signatures are made-up plain-language messages (test data, not real failures). Tests copy
it into a temporary folder, break one thing in one entry, and check the exact
``path:line: field.path: message`` lines the validator prints.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
FIXTURE = TESTS_DIR / "fixtures" / "mini"

# Entries of the fixture, as ``category/id``.
LIMIT = "widgets/widget-limit"
JAM = "widgets/widget-jam"
TIMEOUT = "gadgets/gadget-timeout"
ENTRIES = (LIMIT, JAM, TIMEOUT)

# A line of a problem report: ``path[:line]: [field.path: ]message``.
REPORT_LINE = r"^[^:]+(:\d+)?: .+"


def copy_fixture(destination: Path) -> Path:
    """Copy the mini project into ``destination/mini`` and return its root."""
    root = destination / "mini"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def run_cli(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``python -m failpedia.cli --root ROOT ARGS...`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "failpedia.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def entry_file(root: Path, entry: str) -> Path:
    return root / "entries" / entry / "entry.yaml"


def display(entry: str) -> str:
    """The path the validator prints for an entry's file."""
    return f"entries/{entry}/entry.yaml"


def entry_data(root: Path, entry: str) -> dict[str, Any]:
    """An entry of the fixture as plain values, to change and write back."""
    data: dict[str, Any] = yaml.safe_load(read_entry(root, entry))
    return data


def yaml_text(value: Any, indent: str = "") -> str:
    """Block-style YAML with every string on one line as a JSON string (valid YAML), so a
    test finds the line of any value with ``line_of(text, json.dumps(value))``."""
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{indent}{key}:\n{yaml_text(item, indent + '  ')}")
            else:
                lines.append(f"{indent}{key}: {yaml_text(item)}")
        return "\n".join(lines)
    if isinstance(value, list):
        if not value:
            return "[]"
        items = []
        for item in value:
            text = yaml_text(item, indent + "  ")
            items.append(f"{indent}- {text.lstrip()}")
        return "\n".join(items)
    return json.dumps(value, ensure_ascii=False)


def write_entry_data(root: Path, entry: str, data: dict[str, Any]) -> str:
    """Write an entry from plain values (modeline first); return the file's text."""
    text = "# yaml-language-server: $schema=../../entry.schema.json\n" + yaml_text(data) + "\n"
    write_entry(root, entry, text)
    return text


REGISTRY = "entries/retired.yaml"
# Retired ids for the mini fixture (``entries/retired.yaml``): widget-limit under an earlier
# id, and a gadget merged into widget-jam.
RENAMED = {
    "id": "widget-overflow",
    "category": "widgets",
    "into": "widget-limit",
    "reason": "renamed",
    "date": "'2026-11-02'",
}
MERGED = {
    "id": "gadget-stall",
    "category": "gadgets",
    "into": "widget-jam",
    "reason": "merged",
    "date": "'2026-11-20'",
}


def write_registry(root: Path, *items: dict[str, str]) -> str:
    """Write ``entries/retired.yaml`` holding ``items``; return its text."""
    lines = ["# yaml-language-server: $schema=retired.schema.json", "retired:"]
    for item in items:
        first, *rest = item.items()
        lines.append(f"  - {first[0]}: {first[1]}")
        lines.extend(f"    {key}: {value}" for key, value in rest)
    text = "\n".join(lines if items else [*lines[:1], "retired: []"]) + "\n"
    (root / REGISTRY).write_text(text, encoding="utf-8")
    return text


def read_entry(root: Path, entry: str) -> str:
    return entry_file(root, entry).read_text(encoding="utf-8")


def write_entry(root: Path, entry: str, text: str) -> None:
    entry_file(root, entry).write_text(text, encoding="utf-8")


def replace_in_entry(root: Path, entry: str, old: str, new: str) -> str:
    """Replace the single occurrence of ``old`` in an entry file; return the new text."""
    text = read_entry(root, entry)
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {entry}"
    text = text.replace(old, new)
    write_entry(root, entry, text)
    return text


def replace_line(root: Path, entry: str, prefix: str, new: str) -> str:
    """Replace the one line of an entry file starting with ``prefix``; return the new text."""
    lines = read_entry(root, entry).split("\n")
    found = [index for index, line in enumerate(lines) if line.startswith(prefix)]
    assert len(found) == 1, f"{prefix!r} starts lines {found} in {entry}"
    lines[found[0]] = new
    text = "\n".join(lines)
    write_entry(root, entry, text)
    return text


def line_of(text: str, needle: str) -> int:
    """1-based number of the one line of ``text`` containing ``needle``."""
    found = [number for number, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) == 1, f"{needle!r} is on lines {found}"
    return found[0]


def problem_lines(stderr: str) -> list[str]:
    """The problem lines of a validate report, without the closing count line."""
    lines = stderr.splitlines()
    assert lines, "nothing on stderr"
    assert lines[-1].endswith(("problem found.", "problems found.")), lines[-1]
    return lines[:-1]


def validate(root: Path) -> tuple[int, list[str]]:
    """Run ``failpedia validate``; return its exit code and problem lines.

    Asserts what every failing run must do: exit 1, print no traceback, report one
    problem per line in the ``path:line: field: message`` form, and count them.
    """
    result = run_cli(root, "validate")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = problem_lines(result.stderr)
    count = len(lines)
    summary = result.stderr.splitlines()[-1]
    assert summary == f"{count} problem{'s' * (count > 1)} found.", result.stderr
    bad = [line for line in lines if not re.match(REPORT_LINE, line)]
    assert not bad, f"lines not in path:line: field: message form: {bad}"
    return result.returncode, lines


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail instead of hanging: SIGALRM interrupts Python code and the re engine alike."""

    def expired(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def cpu_time_limit(seconds: float):
    """Fail after ``seconds`` of this process's CPU time: a measured bound that other
    processes on a busy machine do not stretch, as they stretch wall-clock time."""

    def expired(signum, frame):
        raise TimeoutError(f"took more than {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


# What fills a fresh scaffold (`failpedia new`) so that it validates: each placeholder the
# entry file leaves, then "Filled in" for the free texts, and an assertion in the
# reproducer's check region.
SCAFFOLD_FILL = {
    "kind: TODO": "kind: crash",
    "role: TODO": "role: initiating",
    "verified_from: TODO": "verified_from: reproducer-output",
    "device: TODO": "device: cpu",
    "text: TODO  # the message": "text: 'QuxError: widget 9 is new'  #",
    "pattern: TODO": r"pattern: 'QuxError: widget \d+ is new'",
}
# The scaffold's two sightings, each filled with a line of another made-up thread.
SCAFFOLD_SIGHTINGS = [
    (
        "- url: TODO\n        line: TODO  # one line, exactly as the thread shows it; the "
        "pattern must match it",
        "- url: https://github.com/example/widgets/issues/1\n"
        "        line: 'QuxError: widget 3 is new'",
    ),
    (
        "- url: TODO\n        line: TODO\n",
        "- url: https://discuss.example.org/t/new-widgets/2\n"
        "        line: '[rank1]: QuxError: widget 4 is new'\n",
    ),
]
SCAFFOLD_CHECK = "# TODO: assert the result equals a reference"


def fill_scaffold(root: Path, entry: str) -> None:
    """Fill every placeholder of a scaffolded entry and its reproducer."""
    path = entry_file(root, entry)
    text = path.read_text(encoding="utf-8")
    for old, new in SCAFFOLD_FILL.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    for old, new in SCAFFOLD_SIGHTINGS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text.replace("TODO", "Filled in"), encoding="utf-8")
    script = path.with_name("repro.py")
    source = script.read_text(encoding="utf-8")
    assert source.count(SCAFFOLD_CHECK) == 1
    script.write_text(source.replace(SCAFFOLD_CHECK, "assert widgets == 9  #"), encoding="utf-8")


def grow_catalog(root: Path, count: int) -> None:
    """Add ``count`` proved-style entries to a copy of the mini fixture, each with a
    signature of its own: at most 15% of a catalog may be documented from reports."""
    source = root / "entries" / LIMIT
    for number in range(count):
        entry_id = f"widget-limit-{number}"
        folder = source.parent / entry_id
        shutil.copytree(source, folder)
        for path in folder.iterdir():
            text = path.read_text(encoding="utf-8")
            text = text.replace("widget-limit", entry_id).replace("FooError", f"Foo{number}Error")
            path.write_text(text, encoding="utf-8")
