"""The commands that read logs and the signature index: diagnose, explain.

They import only what reading a log needs (no YAML, no templates, no runner), because
``failpedia diagnose`` is timed against grep and its start-up counts.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failpedia.cli.exit_codes import NONE_FOUND, SUCCESS, USAGE
from failpedia.project import index_source
from failpedia.signatures.index_format import IndexUnavailable, SignatureIndex, retired_text

if TYPE_CHECKING:
    from failpedia.diagnose.findings import Diagnosis
    from failpedia.diagnose.sources import LogInput


def index_source_of(args: argparse.Namespace) -> index_source.IndexSource:
    """The index that ``--index``, ``--entries`` and ``--root`` name, or the project's
    found here, or the wheel's; ``IndexUnavailable`` where there is none."""
    return index_source.find_index_source(
        Path(args.index) if args.index else None,
        Path(args.entries) if args.entries else None,
        args.root,
    )


def cmd_diagnose(args: argparse.Namespace) -> int:
    from failpedia.diagnose.diagnosis import diagnose
    from failpedia.diagnose.output import visible
    from failpedia.diagnose.sources import collect_inputs

    if not args.paths and sys.stdin.isatty():
        print(
            "failpedia diagnose: give log files or folders, or pipe a log into '-'", file=sys.stderr
        )
        return USAGE
    skipped: list[str] = []
    inputs, problems = collect_inputs(args.paths, skipped)
    try:
        # Parsed inside diagnose: while it is, the first log may already be scanned.
        source = index_source_of(args)
        index = index_source.open_index(source)
        result = diagnose(inputs, index, context=args.context, engine_name=args.engine)
    except IndexUnavailable as error:
        print(f"failpedia diagnose: {error}", file=sys.stderr)
        return USAGE
    result = index_source.with_nearest(result, source)
    result.problems[:0] = problems
    result.skipped.extend(skipped)
    for item in result.skipped:
        print(f"skipped: {visible(item)}", file=sys.stderr)
    for warning in result.warnings:
        print(f"warning: {visible(warning)}", file=sys.stderr)
    for problem in result.problems:
        print(f"error: {visible(problem)}", file=sys.stderr)
    shown = _diagnosis_shown(result, inputs, args)
    if shown:  # github and gcc print nothing where nothing matched
        print(shown)
    if result.problems:
        return USAGE
    return SUCCESS if result.findings else NONE_FOUND


def _diagnosis_shown(result: Diagnosis, inputs: list[LogInput], args: argparse.Namespace) -> str:
    """The diagnosis in the ``--format`` asked for: text for people, JSON for programs,
    one line per finding for GitHub Actions or an editor (none when nothing matched)."""
    from failpedia.diagnose.output import diagnosis_json, diagnosis_text

    quick_answer = not args.brief
    if args.format == "json":
        return diagnosis_json(result)
    if args.format in ("github", "gcc"):
        from failpedia.diagnose.annotations import gcc_lines, github_lines

        stdin_sources = {source for source, log in enumerate(inputs) if log.path is None}
        lines = github_lines if args.format == "github" else gcc_lines
        return "\n".join(lines(result, stdin_sources, quick_answer))
    return diagnosis_text(result, quick_answer)


def cmd_explain(args: argparse.Namespace) -> int:
    from failpedia.cli.explain_text import explain_text

    try:
        source = index_source_of(args)
        index = index_source.load_index(source)
        texts = index_source.load_entry_texts(source)
    except IndexUnavailable as error:
        print(f"failpedia explain: {error}", file=sys.stderr)
        return USAGE
    entry_id = args.id
    successor = index.successor(entry_id) if entry_id not in texts else None
    if successor is not None:  # an old id of a renamed or merged entry: show that entry
        old_id, entry_id = entry_id, successor.into
        said = retired_text(old_id, entry_id, successor.reason, successor.date)
        print(f"failpedia explain: {said}; its entry follows.", file=sys.stderr)
    elif entry_id not in texts and not _looks_like_an_id(entry_id):
        return _explain_message(args, texts, index, source)
    entry = texts.get(entry_id)
    if entry is None and index_source.was_left_out(source, entry_id):
        print(
            f"failpedia explain: entry {entry_id!r} has problems; `failpedia validate` lists them",
            file=sys.stderr,
        )
        return USAGE
    if entry is None:
        close = difflib.get_close_matches(entry_id, list(texts), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        print(f"failpedia explain: no entry {entry_id!r}{hint}", file=sys.stderr)
        return USAGE
    indexed = next(item for item in index.entries if item.id == entry_id)
    print(explain_text(entry, index.url(indexed)), end="")
    return SUCCESS


def _looks_like_an_id(text: str) -> bool:
    """An entry id's shape (lower-case words joined by hyphens), not a pasted message."""
    return re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", text) is not None


def _explain_message(
    args: argparse.Namespace,
    texts: dict[str, dict[str, Any]],
    index: SignatureIndex,
    source: index_source.IndexSource,
) -> int:
    """``explain "<pasted message>"``: the entry whose signature matches the message, read
    as ``diagnose`` reads a log; where none does, the entries nearest in wording."""
    from failpedia.cli.explain_text import explain_text
    from failpedia.diagnose.diagnosis import diagnose
    from failpedia.diagnose.output import visible
    from failpedia.diagnose.sources import collect_inputs

    with tempfile.TemporaryDirectory(prefix="failpedia-explain-") as folder:
        message = Path(folder) / "message"
        message.write_text(args.id + "\n", encoding="utf-8")
        inputs, _ = collect_inputs([str(message)], [])
        result = diagnose(inputs, index, context=0)
    if not result.findings:
        result = index_source.with_nearest(result, source)
        print("failpedia explain: no entry's signature matches this message.", file=sys.stderr)
        if result.nearest:
            print("Not matches, only the entries nearest in wording to it:")
            for near in result.nearest:
                print(f"  - {visible(near.title)}\n    {near.id}: {near.url}")
        return NONE_FOUND
    first, *others = result.findings
    print(explain_text(texts[first.entry.id], first.url), end="")
    if others:
        also = ", ".join(finding.entry.id for finding in others)
        print(f"\nThe message also matches: {also} (`failpedia explain ID` for each).")
    return SUCCESS
