"""``failpedia diagnose --format github|gcc`` through its command line: one line per
finding that points at the log line it matched, escaped so that no log text or file name
can add a command, and read by the VS Code problem matcher shipped in editors/."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from diagnose_helpers import CORPUS, MATMUL_LINE, corpus_logs, run_diagnose

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "editors" / "vscode" / "tasks.json"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Kinds whose failures end the run; the others (warning, silent-wrong-result) it survives.
FATAL_KINDS = {"crash", "hang"}


def problem_matcher_pattern() -> re.Pattern[str]:
    """The regexp of the shipped VS Code task's problem matcher, as Python reads it.

    VS Code runs it as a JavaScript regexp. It holds no backslash escape (``\\d``, ``\\s``
    and ``\\w`` match more in Python than in JavaScript), and the lines it reads hold no
    line terminator (JavaScript's ``.`` stops at CR, U+2028 and U+2029 too, asserted of
    every line below), so both dialects read it alike."""
    [task] = json.loads(TASKS.read_text(encoding="utf-8"))["tasks"]
    assert task["args"] == ["diagnose", "--format", "gcc", "${file}"]
    pattern = task["problemMatcher"]["pattern"]
    assert "\\" not in pattern["regexp"]
    assert (pattern["file"], pattern["line"], pattern["severity"], pattern["message"]) == (
        1,
        2,
        3,
        4,
    )
    return re.compile(pattern["regexp"])


def stdout_lines(text: str) -> list[str]:
    """Output cut into lines at every line boundary any reader may use (Python's
    ``splitlines`` breaks at CR, U+2028, NEL and more, beyond GitHub's runner's CR and LF)."""
    return text.splitlines()


def workflow_commands(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    """The workflow commands GitHub's runner would read from ``stdout``: it cuts output at
    CR and LF, and a line whose start, after spaces, is ``::`` is a command up to the next
    ``::``, properties split at commas, then unescaped (ActionCommand.TryParseV2)."""

    def unescape(text: str, table: dict[str, str]) -> str:
        for escaped, raw in table.items():
            text = text.replace(escaped, raw)
        return text

    data_escapes = {"%0D": "\r", "%0A": "\n", "%25": "%"}
    property_escapes = {"%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ",", "%25": "%"}
    commands = []
    for line in re.split(r"\r\n|\r|\n", stdout):
        line = line.lstrip()
        if not line.startswith("::"):
            continue
        end = line.index("::", 2)
        name, _, properties = line[2:end].partition(" ")
        pairs = (item.split("=", 1) for item in properties.strip().split(",") if item)
        values = {key: unescape(value, property_escapes) for key, value in pairs}
        commands.append((name, values, unescape(line[end + 2 :], data_escapes)))
    return commands


def diagnose(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    done = run_diagnose(*args, stdin=stdin)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def findings_json(*args: str, stdin: bytes | None = None) -> list[dict[str, Any]]:
    code, stdout, stderr = diagnose("--format", "json", *args, stdin=stdin)
    assert code in (0, 1), stderr
    findings: list[dict[str, Any]] = json.loads(stdout)["findings"]
    return findings


def assert_points_at_the_match(finding: dict[str, Any], path: Path, line: int) -> None:
    """The log's line ``line`` (counted at newlines, as editors and GitHub count) holds
    the text the finding's signature matched."""
    first = finding["first"]
    matched = first["text"][first["match"][0] : first["match"][1]]
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    shown = ANSI.sub("", raw.decode().split("\n")[line - 1])
    assert matched and matched in shown, (path, line, matched)


@pytest.mark.slow
def test_each_finding_is_one_gcc_line_at_its_matched_line_read_by_the_problem_matcher() -> None:
    logs = [str(path) for path in corpus_logs()]
    findings = findings_json(*logs)
    code, stdout, _ = diagnose("--format", "gcc", *logs)
    assert code == 0
    lines = stdout_lines(stdout)
    assert len(lines) == len(findings) > 5
    pattern = problem_matcher_pattern()
    kinds = set()
    for line, finding in zip(lines, findings, strict=True):
        assert re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", line) is None
        parsed = pattern.fullmatch(line)
        assert parsed is not None, line
        file, number, severity, message = parsed.groups()
        first = finding["first"]
        assert (file, int(number)) == (first["file"], first["line"])
        assert_points_at_the_match(finding, Path(file), int(number))
        assert severity == ("error" if finding["kind"] in FATAL_KINDS else "warning")
        kinds.add(severity)
        assert message.startswith(f"{finding['title']} [{finding['id']}, ")
        assert message.endswith(f" {finding['url']}")
    assert kinds == {"error", "warning"}  # the corpus holds both, so both are checked


@pytest.mark.slow
def test_each_finding_is_one_github_command_at_its_matched_line() -> None:
    log = CORPUS / "gloo-crash-cascade.log"
    findings = findings_json(str(log))
    code, stdout, _ = diagnose("--format", "github", str(log))
    assert code == 0
    commands = workflow_commands(stdout)
    assert len(commands) == len(stdout_lines(stdout)) == len(findings) == 5
    for (name, properties, message), finding in zip(commands, findings, strict=True):
        first = finding["first"]
        assert name == ("error" if finding["kind"] in FATAL_KINDS else "warning")
        assert properties == {
            "file": str(log),
            "line": str(first["line"]),
            "title": f"failpedia: {finding['id']}",
        }
        assert_points_at_the_match(finding, log, first["line"])
        summary, matched = message.split("\n")
        assert summary.startswith(f"{finding['title']} [{finding['id']}, ")
        assert summary.endswith(f" {finding['url']}")
        assert matched.endswith(first["text"].strip())
    # Entry titles hold colons and commas (torchrun's "failed (exitcode: N) local_rank:
    # N"): the message carries them as they are.
    assert "failed (exitcode: N) local_rank: N" in commands[2][2]


@pytest.mark.slow
def test_stdin_gzip_and_a_rank_folder_name_the_file_that_holds_the_line(tmp_path: Path) -> None:
    """Standard input is ``<stdin>`` for editors (as gcc names it) and ``-`` for GitHub;
    a gzip log is named itself, with the line counted in its text; a rank's file inside a
    folder is named by its path."""
    source = CORPUS / "ddp-dataloader-oom.log"
    packed = tmp_path / "train.log.gz"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    folder = tmp_path / "run" / "attempt_0" / "3"
    folder.mkdir(parents=True)
    (folder / "stdout.log").write_text("step 1 loss 2.1\n")
    rank_log = folder / "stderr.log"
    rank_log.write_text("step 1 loss 2.1\nstep 2 loss 2.0\n" + MATMUL_LINE.format(7) + "\n")
    pattern = problem_matcher_pattern()

    _, stdout, _ = diagnose("--format", "gcc", "-", stdin=source.read_bytes())
    [first, *_] = stdout_lines(stdout)
    [finding, *_] = findings_json("-", stdin=source.read_bytes())
    parsed = pattern.fullmatch(first)
    assert parsed is not None
    assert parsed.group(1, 2) == ("<stdin>", str(finding["first"]["line"]))
    _, stdout, _ = diagnose("--format", "github", "-", stdin=source.read_bytes())
    assert workflow_commands(stdout)[0][1]["file"] == "-"

    _, stdout, _ = diagnose("--format", "gcc", str(packed))
    parsed = pattern.fullmatch(stdout_lines(stdout)[0])
    assert parsed is not None and parsed.group(1, 2) == (str(packed), "17")
    assert_points_at_the_match(findings_json(str(packed))[0], packed, 17)

    _, stdout, _ = diagnose("--format", "github", str(tmp_path / "run"))
    [(name, properties, message)] = workflow_commands(stdout)
    assert (name, properties["file"], properties["line"]) == ("error", str(rank_log), "3")
    assert message.split("\n")[1] == f"line 3 (rank 3): {MATMUL_LINE.format(7)}"


# Not ":12: warning: " in the name: that would be read as the line by any gcc-style matcher.
HOSTILE_NAME = "ev%il:x,y: \r::warning::from-the-name\n##[error]n.log"
HOSTILE_LINE = (
    "[rank0]: 100% done, step: 3 %0A::warning file=a,line=1::injected ##[error]legacy "
    + MATMUL_LINE.format(8)
    + " ::error::again"
)


@pytest.mark.slow
def test_a_hostile_log_and_file_name_cannot_add_a_command_or_a_line(tmp_path: Path) -> None:
    """A file name with ``%``, a colon, a comma, CR, LF and ``::warning::``, holding a
    line with ``%``, an escaped-looking ``%0A`` and commands of both syntaxes: one command
    per finding, whose file and message read back exactly; one gcc line per finding."""
    log = tmp_path / HOSTILE_NAME
    log.write_text(f"step 1 loss 2.1\n{HOSTILE_LINE}\nstep 2 loss 2.0\n")
    code, stdout, _ = diagnose("--format", "github", str(log))
    assert code == 0
    [(name, properties, message)] = workflow_commands(stdout)
    assert len(stdout_lines(stdout)) == 1
    assert (name, properties["file"], properties["line"]) == ("error", str(log), "2")
    assert properties["title"] == "failpedia: matmul-shapes-cannot-be-multiplied"
    assert message.split("\n")[1] == "line 2 (rank 0): " + HOSTILE_LINE.removeprefix("[rank0]: ")

    code, stdout, _ = diagnose("--format", "gcc", str(log))
    assert code == 0
    [line] = stdout_lines(stdout)
    assert re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", line) is None
    parsed = problem_matcher_pattern().fullmatch(line)
    assert parsed is not None
    shown_name = str(log).replace("\r", "^M").replace("\n", "^J")
    assert parsed.group(1, 2, 3) == (shown_name, "2", "error")


@pytest.mark.slow
def test_exit_codes_hold_for_every_format(tmp_path: Path) -> None:
    """0 found, 1 none (and nothing printed), 2 an input unreadable (the rest printed);
    ``--json`` is ``--format json``."""
    found = str(CORPUS / "ddp-dataloader-oom.log")
    for form in ("github", "gcc"):
        assert diagnose("--format", form, found)[0] == 0
        code, stdout, _ = diagnose("--format", form, str(CORPUS / "no-known-failure.log"))
        assert (code, stdout) == (1, "")
        code, stdout, stderr = diagnose("--format", form, str(tmp_path / "nope.log"), found)
        assert code == 2 and "nope.log: no such file or folder" in stderr
        assert "dataloader-worker-killed-by-signal" in stdout
    assert diagnose("--json", found)[1] == diagnose("--format", "json", found)[1]
    code, _, stderr = diagnose("--format", "sarif", found)
    assert code == 2 and "invalid choice: 'sarif'" in stderr
