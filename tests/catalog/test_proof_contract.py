"""The proof contract, as ``failpedia validate`` enforces it on a reproducer and its texts.

Each test copies the mini fixture, breaks one rule in ``widget-limit`` (its reproducer,
its signature, or the healthy-log corpus) and checks the exact problem line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import (
    LIMIT,
    TIMEOUT,
    copy_fixture,
    display,
    line_of,
    replace_in_entry,
    run_cli,
    validate,
)

LIMIT_FILE = display(LIMIT)
SCRIPT = f"entries/{LIMIT}/repro.py"
LIMIT_TEXT = '  - text: "FooError: widget count 3 exceeds limit 2"'
TIMEOUT_TEXT = '  - text: "BazError: gadget 12 timed out after 30 seconds"'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path)


def edit_script(root: Path, old: str, new: str) -> str:
    path = root / SCRIPT
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return text


def script_problems(root: Path) -> list[str]:
    """The problem lines about the reproducer, without the entry's path and field."""
    _, lines = validate(root)
    prefix = f"{LIMIT_FILE}:"
    found = [line for line in lines if line.startswith(prefix) and ": reproducer.script: " in line]
    return [line.split(": reproducer.script: ", 1)[1] for line in found]


def test_a_reproducer_without_a_check_region_is_refused(root: Path) -> None:
    edit_script(root, "# --- check: start\n", "")
    edit_script(root, "# --- check: end\n", "")
    assert script_problems(root) == [
        "repro.py: no check region: mark the check code between `# --- check: start` and "
        "`# --- check: end`"
    ]


def test_a_check_that_asserts_nothing_is_refused(root: Path) -> None:
    text = edit_script(
        root,
        'assert built == widgets[: len(built)], "every widget built is one that was asked for"',
        "print(built)",
    )
    start = line_of(text, "# --- check: start")
    assert script_problems(root) == [
        f"repro.py:{start}: the check region asserts nothing: compare the fixed result with a "
        "reference (`assert ...`, `torch.testing.assert_close(...)`)"
    ]


def test_a_check_that_reads_the_mode_is_refused(root: Path) -> None:
    text = edit_script(
        root,
        'assert built == widgets[: len(built)], "every widget built is one that was asked for"',
        "assert not FIXED or built == widgets[:limit]",
    )
    line = line_of(text, "assert not FIXED")
    assert script_problems(root) == [
        f"repro.py:{line}: FIXED is used outside the fix region: every difference between the "
        "modes must lie in the region (or be its one `if FIXED:` guard, without else), so "
        "the code a reader copies is the code that made the difference",
        f"repro.py:{line}: the check region must not depend on the mode: it checks the result "
        "the same way whichever mode ran",
    ]


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        # A second difference between the modes, outside the region.
        (
            "if len(built) > limit:",
            "if not FIXED and len(built) > limit:",
            "if not FIXED and",
        ),
        # The guard may not have an else branch: the broken code would be a difference too.
        (
            "# --- fix: end\n",
            "# --- fix: end\nelse:\n    built = build(widgets)\n",
            "if FIXED:",
        ),
    ],
)
def test_the_fix_region_must_hold_every_difference(
    root: Path, old: str, new: str, needle: str
) -> None:
    text = edit_script(root, old, new)
    assert script_problems(root) == [
        f"repro.py:{line_of(text, needle)}: FIXED is used outside the fix region: every "
        "difference between the modes must lie in the region (or be its one `if FIXED:` "
        "guard, without else), so the code a reader copies is the code that made the difference"
    ]


FLAG_TEST = 'if "--fixed" not in'


def test_the_flag_literal_appears_only_in_its_definition(root: Path) -> None:
    text = edit_script(
        root, "if len(built) > limit:", 'if "--fixed" not in sys.argv and len(built) > limit:'
    )
    assert script_problems(root) == [
        f"repro.py:{line_of(text, FLAG_TEST)}: "
        '"--fixed" outside the flag\'s '
        'definition: define `FIXED = "--fixed" in sys.argv[1:]` once at top level and use '
        "FIXED only in the fix region"
    ]


def test_undeclared_imports_are_refused_and_declared_ones_pass(root: Path) -> None:
    text = edit_script(root, "import sys\n", "import sys\n\nimport numpy\nimport yaml\n")
    assert script_problems(root) == [
        f"repro.py:{line_of(text, 'import numpy')}: imports 'numpy', which is neither the "
        "standard library nor torch: declare its package in reproducer.requirements as "
        "name==version",
        f"repro.py:{line_of(text, 'import yaml')}: imports 'yaml', which is neither the "
        "standard library nor torch: declare its package in reproducer.requirements as "
        "name==version",
    ]
    replace_in_entry(
        root, LIMIT, "  timeout: 30", "  timeout: 30\n  requirements: [numpy==2.4.6, PyYAML==6.0.3]"
    )
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr


def test_a_check_region_must_not_end_less_indented_than_it_starts(root: Path) -> None:
    edit_script(root, "# --- check: start\n", "if built:\n    # --- check: start\n")
    text = edit_script(
        root,
        'assert built == widgets[: len(built)], "every widget built is one that was asked for"',
        "    assert built\nassert len(built) <= limit",
    )
    assert script_problems(root) == [
        f"repro.py:{line_of(text, 'assert len(built)')}: the check region's lines must be "
        "indented at least as much as its first line (the runner confirms the check ran to its "
        "end at that indentation)",
        f"repro.py:{line_of(text, '# --- check: end')}: the check region does not end where a "
        "statement can follow at its first line's indentation (unexpected indent)",
    ]


def test_machine_paths_in_a_signature_text_are_refused_with_the_neutral_form(root: Path) -> None:
    text = replace_in_entry(
        root,
        LIMIT,
        LIMIT_TEXT,
        "  - text: |-\n"
        '      File "/home/alice/venv/lib/python3.11/site-packages/widgets/build.py", line 4\n'
        "      FooError: widget count 3 exceeds limit 2",
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, '- text: |-')}: signatures[0].text: holds a path of the "
        "machine that captured it; write the line as "
        '`File ".../site-packages/widgets/build.py", line 4`'
    ]


def test_template_placeholders_in_a_signature_text_are_refused(root: Path) -> None:
    text = replace_in_entry(
        root,
        LIMIT,
        LIMIT_TEXT,
        "  - text: 'FooError: widget count 3 exceeds limit 2 in {factory}: %s'",
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, '{factory}')}: signatures[0].text: holds source-template "
        "placeholders (`{factory}`, `%s`): quote the message as it is printed, with real values"
    ]


def test_a_pattern_matching_a_healthy_log_line_is_refused(root: Path) -> None:
    corpus = root / "tests" / "healthy_logs"
    corpus.mkdir(parents=True)
    (corpus / "run.log").write_text(
        "epoch 1 loss 0.52\nFooError: widget count 9 exceeds limit 9 (retrying, fine)\n"
    )
    text = (root / display(LIMIT)).read_text(encoding="utf-8")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: matches a line of "
        "a healthy log (tests/healthy_logs/run.log:2: `FooError: widget count 9 exceeds limit 9 "
        "(retrying, fine)`): too broad"
    ]


def test_a_generic_pattern_is_refused(root: Path) -> None:
    text = replace_in_entry(
        root,
        LIMIT,
        LIMIT_TEXT,
        "  - text: |-\n      Traceback (most recent call last):\n"
        "      FooError: widget count 3 exceeds limit 2",
    )
    text = replace_in_entry(
        root,
        LIMIT,
        r"pattern: 'FooError: widget count \d+ exceeds limit \d+'",
        r"pattern: 'Traceback \(most recent call last\):|FooError: widget count \d+'",
    )
    result = run_cli(root, "validate")  # the report names the line, so no validate()
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: matches the generic "
        "line `Traceback (most recent call last):`: too broad",
        "1 problem found.",
    ]


def test_a_pattern_matching_another_entrys_text_needs_a_declared_relation(root: Path) -> None:
    other_text = replace_in_entry(
        root,
        TIMEOUT,
        TIMEOUT_TEXT,
        "  - text: |-\n      FooError: widget count 3 exceeds limit 2\n"
        "      BazError: gadget 12 timed out after 30 seconds",
    )
    text = (root / display(LIMIT)).read_text(encoding="utf-8")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: also matches the "
        "signature text of gadget-timeout: make it specific, or declare the relation in `related` "
        "(a wrapper and the error it wraps)"
    ]
    assert other_text
    replace_in_entry(
        root,
        TIMEOUT,
        "mechanism:",
        "related:\n  - id: widget-limit\n    relation: caused-by\nmechanism:",
    )
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr
