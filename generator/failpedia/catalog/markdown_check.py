"""What a Markdown field of an entry may hold: entries come from strangers' pull requests,
and every page of the site shows their text.

- No raw HTML: nothing an HTML tokenizer reads as a tag (``<`` followed by an ASCII
  letter, ``/``, ``!`` or ``?``) outside code, so no tag name (``<x:y onfocus=...>``)
  slips through.
- Links (inline, reference-style, ``<...>`` autolinks) go to http or https addresses or
  to pages of this site (a relative path).
- Images come from this site only (a relative path): pages make no external requests.
- Code fences open and close where the renderer sees them (``markdown_code``).

Link targets are read as the renderer and a browser decode them: character references,
backslash escapes, backticks of code spans, and the whitespace a browser drops from a
URL, so ``java&#9;script:`` and ``[x](`javascript:...`)`` are ``javascript:`` links.
Every check is linear in the length of the text.
"""

from __future__ import annotations

import html
import re

from failpedia.catalog.markdown_code import read_code

RAW_HTML = "raw HTML is not allowed ({!r}); use Markdown, or put code in backticks"
LINK_RULE = "links go to http or https addresses, or to pages of this site"
IMAGE_RULE = "pages load nothing from other sites: images must be files of this site"
FENCE_RULE = (
    "a code fence opens with ``` or ~~~ (and a language) on a line of its own, not the "
    "field's first, and closes with the same fence at the same indentation"
)
WEB_SCHEMES = ("http", "https")

_TAG_START = re.compile(r"<[A-Za-z/!?]")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]*:[^\s<>]*)>")
_BRACKET = re.compile(r"[\[\]]")
# A link definition may follow quote marks and list markers: ``> 1. [label]: target``.
_DEFINITION = re.compile(
    r"^(?:[ \t>]|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))*\[([^\[\]\n]*)\]:[ \t]*(.*)$",
    re.MULTILINE,
)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_SCHEME_CHARACTERS = re.compile(r"[A-Za-z0-9+.\-]*")
_DROPPED = re.compile(r"[\s`\x00-\x1f]+")
_ENCODED = re.compile(r"[&\\\s`\x00-\x1f]")  # what _normalized_target has to undo
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()>#+\-.!])")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# A link target is read this far to find its scheme; a longer run of scheme characters
# is refused rather than guessed.
_TARGET_WINDOW = 1024


def _normalized_target(raw: str) -> str:
    """A link target as the browser will see it, for deciding where it leads."""
    if _ENCODED.search(raw) is None:
        return raw.lstrip("<")
    target = html.unescape(_MARKDOWN_ESCAPE.sub(r"\1", raw))
    return _DROPPED.sub("", target).lstrip("<")


def link_target_problem(raw: str, *, image: bool, complete: bool = True) -> str | None:
    """Why a link (or image) target is not allowed, or None.

    ``complete`` is False when ``raw`` was cut short, so a scheme might follow.
    """
    target = _normalized_target(raw)
    scheme = _SCHEME.match(target)
    outside = target.startswith(("/", "\\"))  # //host, /\host or the server's root
    undecided = not complete and _SCHEME_CHARACTERS.fullmatch(target) is not None
    if scheme is not None:
        allowed = not image and scheme.group(1).lower() in WEB_SCHEMES
    else:
        allowed = not outside and not undecided
    if allowed:
        return None
    if image:
        return f"image {target[:60]!r} is not allowed: {IMAGE_RULE}"
    return f"link to {target[:60]!r} is not allowed: {LINK_RULE}"


def _escaped(text: str, position: int) -> bool:
    """Whether the character at ``position`` follows an odd number of backslashes."""
    count = 0
    while position - count > 0 and text[position - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _inline_target(text: str, start: int) -> tuple[str, bool]:
    """The target text after ``](``: up to its closing parenthesis, the next ``](`` or a
    blank line; and whether it ended there rather than at the reading limit."""
    limit = min(len(text), start + _TARGET_WINDOW)
    complete = limit == len(text)
    next_link = text.find("](", start, limit)
    if next_link >= 0:
        limit, complete = next_link, True
    blank = _BLANK_LINE.search(text, start, limit)
    if blank is not None:
        limit, complete = blank.start(), True
    depth = 0
    for position in range(start, limit):
        character = text[position]
        if character == "(":
            depth += 1
        elif character == ")":
            if depth == 0:
                return text[start:position], True
            depth -= 1
    return text[start:limit], complete


def _label_key(label: str) -> str:
    return " ".join(label.split()).lower()


class _Findings:
    """The first problem of each kind in one text."""

    def __init__(self) -> None:
        self.raw_html: str | None = None
        self.link: str | None = None
        self.image: str | None = None

    def add(self, problem: str | None) -> None:
        if problem is None:
            return
        if problem.startswith("image ") and self.image is None:
            self.image = problem
        elif problem.startswith("link ") and self.link is None:
            self.link = problem


def _check_tags(text: str, prose: str, findings: _Findings) -> None:
    """Tags outside code; ``<scheme:...>`` autolinks are links."""
    for match in _TAG_START.finditer(prose):
        autolink = _AUTOLINK.match(prose, match.start())
        if autolink is not None:
            findings.add(link_target_problem(autolink.group(1), image=False))
        elif findings.raw_html is None:
            snippet = text[match.start() : match.start() + 20]
            findings.raw_html = RAW_HTML.format(snippet.split("\n")[0])
        if findings.raw_html is not None and findings.link is not None:
            return


def _definitions(unfenced: str, findings: _Findings) -> dict[str, str]:
    """Reference definitions (``[label]: target``), whose targets are links too."""
    targets: dict[str, str] = {}
    for match in _DEFINITION.finditer(unfenced):
        rest = match.group(2).split()
        if not rest:  # the target may stand on the next line
            following = unfenced[match.end() + 1 : match.end() + 1 + _TARGET_WINDOW]
            rest = following.split("\n", 1)[0].split()
        target = rest[0] if rest else ""
        findings.add(link_target_problem(target, image=False))
        targets.setdefault(_label_key(match.group(1)), target)
    return targets


def _check_links(unfenced: str, prose: str, findings: _Findings) -> None:
    """Inline links and images, and reference-style images.

    Brackets are paired in ``prose`` (code spans blanked: no link starts inside code),
    targets read from ``unfenced`` (code spans kept: the renderer unwraps them there).
    """
    definitions = _definitions(unfenced, findings)
    opened: list[tuple[int, bool]] = []  # position of "[", and whether "![" opened it
    for match in _BRACKET.finditer(prose):
        position = match.start()
        if _escaped(prose, position):
            continue
        if prose[position] == "[":
            bang = position > 0 and prose[position - 1] == "!"
            opened.append((position, bang and not _escaped(prose, position - 1)))
            continue
        start, image = opened.pop() if opened else (-1, False)
        after = prose[position + 1 : position + 2]
        if after == "(":
            target, complete = _inline_target(unfenced, position + 2)
            findings.add(link_target_problem(target, image=image, complete=complete))
        elif image and definitions:
            label_start, label_end = start + 1, position
            if after == "[":
                close = prose.find("]", position + 2, position + 2 + _TARGET_WINDOW)
                if close > position + 2:
                    label_start, label_end = position + 2, close
            if label_end - label_start > _TARGET_WINDOW:
                continue
            defined = definitions.get(_label_key(unfenced[label_start:label_end]))
            if defined is not None:
                findings.add(link_target_problem(defined, image=True))


def markdown_problems(text: str) -> list[str]:
    """Every kind of problem in one Markdown text, the first of each kind."""
    reading = read_code(text)
    problems = []
    if reading.broken_fence is not None:
        problems.append(FENCE_RULE)
    findings = _Findings()
    prose = reading.masked(spans=True)
    if "<" in prose:
        _check_tags(text, prose, findings)
    if "[" in text or "]" in text:
        _check_links(reading.masked(spans=False), prose, findings)
    problems += [
        problem
        for problem in (findings.raw_html, findings.link, findings.image)
        if problem is not None
    ]
    return problems
