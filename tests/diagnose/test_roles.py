"""A wrapper (a launcher's exit status, a compiler backend's exception) reports whichever
failure it caught: diagnose lists it after every other finding, and where it is all that
was found, says to read the error it carries. Through the CLI, on the mini fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from diagnose_helpers import diagnose_json, run_diagnose
from helpers import LIMIT, TIMEOUT, copy_fixture, entry_data, write_entry_data

WRAPPER_LINE = "BazError: gadget 7 timed out after 45 seconds"
CAUSE_LINE = "FooError: widget count 3 exceeds limit 2"


@pytest.fixture
def entries(tmp_path: Path) -> Path:
    root = copy_fixture(tmp_path)
    data = entry_data(root, TIMEOUT)
    data["role"] = "wrapper"
    data["kind"] = "crash"
    write_entry_data(root, TIMEOUT, data)
    return root / "entries"


def _log(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "train.log"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_a_wrapper_comes_after_the_failure_it_carries(entries: Path, tmp_path: Path) -> None:
    log = _log(tmp_path, WRAPPER_LINE, CAUSE_LINE)
    result = diagnose_json("--entries", str(entries), log)
    assert [(item["id"], item["role"]) for item in result["findings"]] == [
        ("widget-limit", "initiating"),
        ("gadget-timeout", "wrapper"),
    ]
    text = run_diagnose("--entries", str(entries), log).stdout.decode()
    assert "; the one that started it first." in text
    assert "gadget-timeout (reports whichever failure it caught)" in text


def test_a_wrapper_alone_points_to_the_error_it_carries(entries: Path, tmp_path: Path) -> None:
    log = _log(tmp_path, WRAPPER_LINE)
    text = run_diagnose("--entries", str(entries), log).stdout.decode()
    assert (
        "1 known failure in 1 log, 46 bytes, 1 line; it reports a failure caught in "
        "this log: read the error it carries, which no entry matches yet."
    ) in " ".join(text.split())
    assert "other ranks" not in text


def _make_warning(entries: Path, causes: list[str]) -> None:
    root = entries.parent
    data = entry_data(root, LIMIT)
    data["kind"] = "warning"
    if causes:
        data["related"] = [
            *(data.get("related") or []),
            *({"id": target, "relation": "causes", "note": "It times out."} for target in causes),
        ]
    write_entry_data(root, LIMIT, data)


def test_a_survived_warning_that_led_to_nothing_comes_after_a_wrapper(
    entries: Path, tmp_path: Path
) -> None:
    """A warning the run survived above a worker's crash (a deprecation notice before a
    launcher's exit status) says nothing of the crash: the wrapper comes first."""
    _make_warning(entries, causes=[])
    log = _log(tmp_path, CAUSE_LINE, WRAPPER_LINE)
    result = diagnose_json("--entries", str(entries), log)
    assert [item["id"] for item in result["findings"]] == ["gadget-timeout", "widget-limit"]


def test_a_warning_that_causes_the_crash_still_comes_first(entries: Path, tmp_path: Path) -> None:
    _make_warning(entries, causes=["gadget-timeout"])
    log = _log(tmp_path, WRAPPER_LINE, CAUSE_LINE)
    result = diagnose_json("--entries", str(entries), log)
    assert [item["id"] for item in result["findings"]] == ["widget-limit", "gadget-timeout"]


def test_a_silently_wrong_result_comes_before_a_warning_seen_earlier(
    entries: Path, tmp_path: Path
) -> None:
    """Neither ends the run, but a result that is silently wrong (gradients that never
    flow) is what the reader has to act on, not a notice printed before it: the wrong
    result comes first, whichever line came first."""
    _make_warning(entries, causes=[])
    root = entries.parent
    data = entry_data(root, TIMEOUT)
    data["kind"] = "silent-wrong-result"
    data["role"] = "initiating"
    write_entry_data(root, TIMEOUT, data)
    log = _log(tmp_path, CAUSE_LINE, WRAPPER_LINE)
    result = diagnose_json("--entries", str(entries), log)
    assert [item["id"] for item in result["findings"]] == ["gadget-timeout", "widget-limit"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # gadget-timeout claims the line less specifically than widget-limit does
        ("widget count \\d+", ["widget-limit", "gadget-timeout"]),
        # ... or more: the whole line, with its error class and nothing after it
        (
            "^FooError: widget count \\d+ exceeds limit \\d+ \\(cap\\)$",
            ["gadget-timeout", "widget-limit"],
        ),
    ],
)
def test_of_two_entries_claiming_one_line_the_longer_match_comes_first(
    entries: Path, tmp_path: Path, claim: str, expected: list[str]
) -> None:
    """Where two entries' patterns match the same line and nothing else tells them apart,
    the pattern that takes more of the line is the more specific, whichever entry it is."""
    root = entries.parent
    data = entry_data(root, TIMEOUT)
    data["role"] = "initiating"
    data["kind"] = "crash"
    data["signatures"].append(
        {
            **data["signatures"][0],
            "text": "FooError: widget count 3 exceeds limit 2 (cap)",
            "pattern": claim,
        }
    )
    write_entry_data(root, TIMEOUT, data)
    log = _log(tmp_path, "FooError: widget count 3 exceeds limit 2 (cap)")
    result = diagnose_json("--entries", str(entries), log)
    assert [item["id"] for item in result["findings"]] == expected
