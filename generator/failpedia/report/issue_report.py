"""The Markdown issue body ``failpedia report`` prints: what failed, where it ran, and how
to start the entry that would explain it.

Everything a log brings (lines, file names) is redacted first (``signatures.redaction``),
then put where Markdown reads it as plain text: log lines in fenced blocks whose fence is
longer than any run of backticks inside, names in code spans of the same kind, titles
with their punctuation escaped. The body is redacted once more as a whole before it is
printed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from failpedia.diagnose.findings import Diagnosis, ErrorLine, Finding
from failpedia.diagnose.output import starter
from failpedia.report.entry_suggestion import NO_CATEGORY, suggest_category, suggest_id
from failpedia.signatures.finding_order import ROLE_TEXT
from failpedia.signatures.index_format import SignatureIndex
from failpedia.signatures.issue_forms import MAX_SHOWN_LINE
from failpedia.site.issue_links import (
    ENTRY_FIELD,
    ENTRY_WRONG_FORM,
    ENVIRONMENT_FIELD,
    REPORT_FIELD,
    UNKNOWN_FAILURE_FORM,
)

# What the environment section lists besides torch, when installed.
REPORT_PACKAGES = (
    "torch",
    "torchvision",
    "torchaudio",
    "triton",
    "numpy",
    "transformers",
    "accelerate",
    "datasets",
    "tokenizers",
    "safetensors",
    "huggingface-hub",
    "peft",
    "deepspeed",
    "bitsandbytes",
    "flash-attn",
    "xformers",
    "lightning",
    "pytorch-lightning",
    "nvidia-nccl-cu12",
    "nvidia-cudnn-cu12",
)
# What can start inline markup in a line of Markdown, or end a table cell.
_PUNCTUATION = re.compile(r"([\\`*_\[\]<>|#~&])")
_BACKTICKS = re.compile(r"`+")

Redact = Callable[[str], str]


class IssueReport(NamedTuple):
    """The body, and what a link to the matching issue form fills in."""

    title: str
    body: str
    form: str
    fields: dict[str, str]


def escape(text: str) -> str:
    """Plain text within a line of Markdown (never its start): what could start inline
    markup (emphasis, code, links, HTML, entities) or end a table cell is escaped."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def code_span(text: str) -> str:
    """``text`` as inline code, delimited by more backticks than any run inside."""
    text = " ".join(text.split())
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(lines: list[str], language: str = "text") -> str:
    """A fenced block that none of ``lines`` can close: its fence is longer than any run
    of backticks they hold."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + language, *lines, fence])


def _shown(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_LINE else text[: MAX_SHOWN_LINE - 1] + "…"


def _redacted_lines(lines: list[str], redact: Redact) -> list[str]:
    """Consecutive ``lines`` redacted as one text, so that a secret spanning several of
    them (a private key) goes whole; redaction keeps line breaks, so each keeps its
    number."""
    together = redact("\n".join(lines)).split("\n")
    return together if len(together) == len(lines) else [redact(line) for line in lines]


def _numbered(line: int, before: list[str], text: str, after: list[str], redact: Redact) -> str:
    """The line and its context as the terminal shows them, with line numbers."""
    width = len(str(line + len(after)))
    shown = _redacted_lines([*before, text, *after], redact)
    out = [
        f"{'>' if number == line else ' '} {number:>{width}} | {_shown(content)}"
        for number, content in enumerate(shown, start=line - len(before))
    ]
    return fenced(out)


def _where(file: str, line: int, rank: str | None, redact: Redact) -> str:
    where = code_span(f"{redact(file)}:{line}")
    return where + (f", rank {escape(rank)}" if rank is not None else "")


def _finding(number: int, finding: Finding, redact: Redact) -> list[str]:
    first = finding.first
    assert first is not None
    entry = finding.entry
    role = ROLE_TEXT.get(entry.role, entry.role)
    out = [
        f"{number}. **[{escape(entry.title)}]({finding.url})** ({code_span(entry.id)}, {role}), "
        f"first at {_where(first.file, first.line, first.rank, redact)}"
        + (f", seen {finding.count} times" if finding.count > 1 else ""),
        "",
    ]
    block = _numbered(first.line, first.before, first.text, first.after, redact)
    out += ["   " + line if line else line for line in block.split("\n")]
    return [*out, ""]


def _error_lines(items: list[ErrorLine], redact: Redact) -> list[str]:
    """The lines, each group whose contexts overlap or touch in one block, marked."""
    groups: list[list[ErrorLine]] = []
    for item in sorted(items, key=lambda item: (item.order[1], item.line)):
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and last.file == item.file
            and item.line - len(item.before) <= last.line + len(last.after) + 1
        ):
            groups[-1].append(item)
        else:
            groups.append([item])
    out: list[str] = []
    for group in groups:
        text: dict[int, str] = {}
        for item in group:  # a line's own text where no context shows it whole
            text.update((item.line + offset + 1, line) for offset, line in enumerate(item.after))
            start = item.line - len(item.before)
            text.update((start + offset, line) for offset, line in enumerate(item.before))
        for item in group:
            text.setdefault(item.line, item.text)
        marked = {item.line for item in group}
        width = len(str(max(text)))
        numbers = sorted(text)
        shown = _redacted_lines([text[number] for number in numbers], redact)
        block = [
            f"{'>' if number in marked else ' '} {number:>{width}} | {_shown(content)}"
            for number, content in zip(numbers, shown, strict=True)
        ]
        first = group[0]
        out += [_where(first.file, first.line, first.rank, redact) + ":", "", fenced(block), ""]
    return out


def _scanned(diagnosis: Diagnosis, redact: Redact) -> str:
    names = ", ".join(code_span(redact(item.name)) for item in diagnosis.inputs)
    lines = sum(item.lines for item in diagnosis.inputs)
    return f"{names} ({lines:,} lines)"


def environment_section(environment: dict[str, Any]) -> str:
    """The fingerprint as a table; unknown values are said to be unknown."""

    def value(key: str) -> str:
        found = environment.get(key)
        return escape(str(found)) if found not in (None, "") else "unknown"

    gpu = "none"
    if environment.get("cuda_available"):
        count = environment.get("gpu_count") or 0
        gpu = f"{value('gpu_name')} × {count}" if count else value("gpu_name")
    cuda = value("cuda") if environment.get("cuda") else "none (a CPU build of torch)"
    if environment.get("cuda") and not environment.get("cuda_available"):
        cuda += " (no GPU available)"
    packages = environment.get("packages") or {}
    installed = ", ".join(
        f"{escape(name)} {escape(str(version))}"
        for name, version in sorted(packages.items())
        if version and name != "torch"
    )
    rows = [
        ("Python", f"{value('python')} ({value('python_implementation')})"),
        ("OS", value("os")),
        ("CPU", value("cpu")),
        ("torch", value("torch") if environment.get("torch") else "not importable"),
        ("CUDA", cuda),
        ("cuDNN", value("cudnn") if environment.get("cudnn") else "none"),
        ("NCCL", value("nccl") if environment.get("nccl") else "none"),
        ("GPU", gpu),
        ("Driver", value("driver") if environment.get("driver") else "none"),
        ("Packages", installed or "none of the usual ones"),
    ]
    table = ["| | |", "| --- | --- |", *(f"| {name} | {text} |" for name, text in rows)]
    return "\n".join(["### Environment", "", *table])


def issue_report(
    diagnosis: Diagnosis | None,
    environment: dict[str, Any],
    index: SignatureIndex,
    redact: Redact,
) -> IssueReport:
    """The issue body for ``diagnosis`` (None when no log was given)."""
    notice = (
        "<!-- Written by `failpedia report`. Home folders and what looks like a token are "
        "redacted: read it before posting. -->"
    )
    sections: list[str] = []
    title = "A failure with no entry"
    form, fields = UNKNOWN_FAILURE_FORM, {}
    if diagnosis is None:
        sections.append("### What failed\n\nNo log was given: describe the failure here.")
    elif diagnosis.findings:
        first = diagnosis.findings[0].entry
        said = starter(diagnosis, "this log" if len(diagnosis.inputs) == 1 else "these logs")
        out = [
            "### What failed",
            "",
            f"{len(diagnosis.findings)} known failure{'s' * (len(diagnosis.findings) != 1)} "
            f"in {_scanned(diagnosis, redact)}; {said.rstrip('.')}:",
            "",
        ]
        for number, finding in enumerate(diagnosis.findings, start=1):
            out += _finding(number, finding, redact)
        sections.append("\n".join(out).rstrip())
        title = f"{first.id}: "
        form, fields = ENTRY_WRONG_FORM, {ENTRY_FIELD: first.id}
    else:
        out = ["### What failed", "", f"No entry matched {_scanned(diagnosis, redact)}."]
        if diagnosis.error_lines:
            out += ["", "The most error-like lines (marked), with their context:", ""]
            out += _error_lines(diagnosis.error_lines, redact)
            worst = max(diagnosis.error_lines, key=lambda item: (item.score, item.order))
            title = redact(worst.text)
        sections.append("\n".join(out).rstrip())
        sections.append(_new_entry_section(diagnosis, index, redact))
    environment_text = environment_section(environment)
    sections.append(environment_text)
    body = redact("\n\n".join([notice, *sections]) + "\n")
    if form == ENTRY_WRONG_FORM:
        fields[ENVIRONMENT_FIELD] = redact(environment_text)
        fields[REPORT_FIELD] = body
    else:
        fields[REPORT_FIELD] = body
    return IssueReport(redact(title), body, form, fields)


def _new_entry_section(diagnosis: Diagnosis, index: SignatureIndex, redact: Redact) -> str:
    worst = max(diagnosis.error_lines, key=lambda item: (item.score, item.order), default=None)
    texts = [
        text for item in diagnosis.error_lines for text in (*item.before, item.text, *item.after)
    ]
    categories = sorted({entry.category for entry in index.entries})
    category = suggest_category(texts, categories)
    entry_id = suggest_id(redact(worst.text) if worst else "", (e.id for e in index.entries))
    out = [
        "### Start the entry",
        "",
        "To add this failure to the catalog (see CONTRIBUTING.md):",
        "",
        fenced([f"failpedia new {category}/{entry_id}"], "sh"),
    ]
    if category == NO_CATEGORY:
        out += ["", "Categories: " + ", ".join(code_span(name) for name in categories) + "."]
    return "\n".join(out)
