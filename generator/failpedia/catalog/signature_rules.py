"""Signatures that mislead: machine paths and templates in texts, and patterns that fire
where the failure is not.

A text is a message as printed, in the neutral path form pages publish (no capturing
machine's paths, no ``{name}`` or ``%s`` of a source template). A pattern must not match a
line of an ordinary, healthy training log (the corpus in ``tests/healthy_logs/``), a
generic line every traceback has, or another entry's signature text, unless the two
entries declare how they relate (a wrapper and the error it wraps).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.entry_files import SourceFile
from failpedia.catalog.model import Signature
from failpedia.catalog.problems import ProblemList, display_path
from failpedia.catalog.yaml_source import FieldPath, format_field_path
from failpedia.signatures.dialect import CompiledPattern
from failpedia.signatures.line_rules import split_line
from failpedia.signatures.machine_paths import normalise_paths, template_placeholders

# Lines of every traceback and of many healthy logs: a pattern matching one says nothing.
GENERIC_LINES = (
    "Traceback (most recent call last):",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
    "ERROR:",
    "Error",
    "error: ",
    "WARNING:",
    "Killed",
    "Aborted (core dumped)",
    "Segmentation fault (core dumped)",
)
# How many public threads, other than the ones a signature was written from, must show it.
MIN_SIGHTINGS = 2
HEALTHY_LOG_SUFFIX = ".log"
MAX_HEALTHY_LOG_BYTES = 4_000_000


@dataclass(frozen=True)
class HealthyLine:
    """One line of the healthy-log corpus, with where it is."""

    where: str  # path:line
    text: str


def read_healthy_logs(
    folder: Path | None, root: Path | None, problems: ProblemList
) -> list[HealthyLine]:
    """Every line of the ``*.log`` files in ``folder`` (none when it does not exist)."""
    if folder is None or not folder.is_dir():
        return []
    lines: list[HealthyLine] = []
    for path in sorted(folder.glob(f"*{HEALTHY_LOG_SUFFIX}")):
        shown = display_path(path, root)
        try:
            data = read_bounded(path, within=folder, limit=MAX_HEALTHY_LOG_BYTES)
        except RefusedFile as refused:
            problems.add(shown, 0, "", refused.message)
            continue
        text = data.decode("utf-8", errors="replace")
        lines.extend(
            HealthyLine(f"{shown}:{number}", line)
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        )
    return lines


def check_signature_texts(item: CatalogEntry, source: SourceFile, problems: ProblemList) -> None:
    """Texts in the neutral path form, without template placeholders."""
    for index, signature in enumerate(item.entry.signatures):
        path: FieldPath = ("signatures", index, "text")
        where = (source.display, source.document.line_of(path), format_field_path(path))
        for line in signature.text.splitlines():
            neutral = normalise_paths(line)
            if neutral != line:
                problems.add(
                    *where,
                    "holds a path of the machine that captured it; write the line as "
                    f"`{neutral.strip()}`",
                )
                break
        placeholders = template_placeholders(signature.text)
        if placeholders:
            shown = ", ".join(f"`{placeholder}`" for placeholder in dict.fromkeys(placeholders))
            problems.add(
                *where,
                f"holds source-template placeholders ({shown}): quote the message as it is "
                "printed, with real values",
            )


def thread_address(url: str) -> str:
    """A thread's address without its fragment (``#issuecomment-1``) or trailing slash:
    two comments of one thread are one thread."""
    return url.split("#", 1)[0].rstrip("/")


def check_sightings(
    signature: Signature,
    index: int,
    pattern: CompiledPattern,
    origins: set[str],
    problem: Callable[[FieldPath, str], None],
) -> None:
    """``seen_in``: real lines from distinct threads, each matched by the pattern as a log
    line is read (ANSI, ``\\r`` and rank or time prefixes removed); a ``seen_in_note``
    ``origins`` are the threads the
    entry was written from (its references and evidence reports): they do not count."""
    base: FieldPath = ("signatures", index)
    threads: dict[str, int] = {}
    for number, sighting in enumerate(signature.seen_in):
        path: FieldPath = (*base, "seen_in", number)
        url = thread_address(sighting.url)
        if url in threads:
            problem(
                (*path, "url"),
                f"the same thread as seen_in[{threads[url]}]: each sighting is another thread",
            )
        elif url in origins:
            problem(
                (*path, "url"),
                "a thread the entry was written from (in its references or evidence): a "
                "sighting shows the message somewhere else",
            )
            continue
        threads.setdefault(url, number)
        line = sighting.line
        neutral = normalise_paths(line)
        if len(line.strip().splitlines()) != 1:
            problem((*path, "line"), "one line: the message's line exactly as the thread shows it")
        elif neutral != line:
            problem(
                (*path, "line"),
                "holds a path of the poster's machine; pages publish paths in the neutral "
                f"form: {neutral}",
            )
        elif not any(pattern.search(segment.text) for segment in split_line(line)):
            problem(
                (*path, "line"),
                "the signature's pattern does not match it: anchor the pattern on the "
                "message's invariant head and let it tolerate this form (or add the wording "
                "as a signature of its own, from the framework's source)",
            )
    found = len(threads)
    if found < MIN_SIGHTINGS and not (signature.seen_in_note or "").strip():
        problem(
            (*base, "seen_in") if signature.seen_in else base,
            f"{found} public thread(s) show this signature; give at least {MIN_SIGHTINGS} "
            "(`seen_in`: the line as pasted and the thread's URL), or say in `seen_in_note` "
            "what was searched and why fewer were found",
        )
    elif found >= MIN_SIGHTINGS and signature.seen_in_note is not None:
        problem(
            (*base, "seen_in_note"),
            f"{found} threads are given: the note is for signatures with fewer; remove it",
        )


def check_pattern_reach(
    loaded: list[tuple[CatalogEntry, SourceFile]],
    healthy: list[HealthyLine],
    problems: ProblemList,
) -> None:
    """Patterns that match generic lines, healthy-log lines, or an unrelated entry's text."""
    related = {
        frozenset((item.entry.id, link.id)) for item, _ in loaded for link in item.entry.related
    }
    texts = [
        (item.entry.id, line)
        for item, _ in loaded
        for signature in item.entry.signatures
        for line in signature.text.splitlines()
        if line.strip()
    ]
    for item, source in loaded:
        for index, pattern in enumerate(item.patterns):
            path: FieldPath = ("signatures", index, "pattern")
            where = (source.display, source.document.line_of(path), format_field_path(path))
            generic = next((line for line in GENERIC_LINES if pattern.search(line)), None)
            if generic is not None:
                problems.add(*where, f"matches the generic line `{generic}`: too broad")
                continue
            hit = next((line for line in healthy if pattern.search(line.text)), None)
            if hit is not None:
                problems.add(
                    *where,
                    f"matches a line of a healthy log ({hit.where}: `{hit.text.strip()[:160]}`): "
                    "too broad",
                )
                continue
            others = sorted(
                {
                    owner
                    for owner, line in texts
                    if owner != item.entry.id
                    and frozenset((item.entry.id, owner)) not in related
                    and pattern.search(line)
                }
            )
            if others:
                problems.add(
                    *where,
                    f"also matches the signature text of {', '.join(others)}: make it "
                    "specific, or declare the relation in `related` (a wrapper and the error "
                    "it wraps)",
                )
