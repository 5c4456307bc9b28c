"""Filters for the page templates: text from entries (and from verification records)
placed safely in Markdown and in the HTML the theme prints around it.

Entry text is untrusted. Markdown fields passed ``catalog.markdown_check``, but where a
filter flattens or cuts them (table cells, first sentences) code spans could lose their
backticks and free the markup inside, so those filters escape every ``<`` outside code.
Front matter values (titles, descriptions, search terms) go into the theme's HTML and
the search index without escaping, so they are HTML-escaped here. Verbatim text is shown
in ``<pre>`` blocks that no line of it can turn into a code fence.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

from failpedia.catalog.markdown_code import code_spans


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(re.escape(char) + "+", text)
    return max((len(run) for run in runs), default=0)


def fence(text: str, language: str = "text") -> str:
    """A fenced code block that no backtick run inside ``text`` can close early."""
    marker = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{marker}{language}\n{text.rstrip()}\n{marker}"


# Backticks and tildes as character references: a line of ``` or ~~~ inside a <pre> block
# would otherwise open a code fence in the page around it.
_FENCE_CHARACTERS = str.maketrans({"`": "&#96;", "~": "&#126;"})


def preformatted(text: str) -> str:
    """A plain ``<pre><code>`` block for verbatim text (signatures, diagrams).

    Emitted as HTML rather than a fenced block: these blocks need no highlighting, and
    running Pygments on every one of them was the largest single cost of a site build.
    """
    escaped = html.escape(text.rstrip(), quote=False).translate(_FENCE_CHARACTERS)
    return f"<pre><code>{escaped}</code></pre>"


def inline_code(text: str) -> str:
    marker = "`" * (_longest_run(text, "`") + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{marker}{padding}{text}{padding}{marker}"


def _escape_markup_outside_code(flat: str) -> str:
    """``<`` as ``&lt;`` wherever it is not inside a code span of this one-line text (all of
    them when the spans are uncertain): flattening must not turn code into markup."""
    spans = code_spans(flat) or []
    pieces, position = [], 0
    for start, end in spans:
        pieces += [flat[position:start].replace("<", "&lt;"), flat[start:end]]
        position = end
    pieces.append(flat[position:].replace("<", "&lt;"))
    return "".join(pieces)


def table_cell(text: str) -> str:
    """One line of Markdown for a table cell or a heading."""
    return _escape_markup_outside_code(" ".join(text.split())).replace("|", "\\|")


def page_text(text: str) -> str:
    """Plain text for the theme's HTML (page title, meta description), escaped."""
    return html.escape(" ".join(text.split()), quote=True)


_MARKDOWN_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# Code and emphasis marks: stray backticks, and asterisks that pair around text (a lone
# one, as in ``*_optim_states.pt``, is text); identifiers keep their _.
_MARKDOWN_MARKS = re.compile(r"`+|(\*{1,3})(?=\S)(.+?)(?<=\S)\1")


def _drop_marks(text: str) -> str:
    return _MARKDOWN_MARKS.sub(lambda match: match.group(2) or "", text)


def _code_text(span: str) -> str:
    """What a code span shows: its text without the backticks around it (and the one
    space that may pad each side)."""
    inner = span.strip("`")
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        inner = inner[1:-1]
    return inner


def unmarked(text: str) -> str:
    """Markdown as one line of plain, unescaped text: code and emphasis marks and link
    targets removed, code kept as it is (``x * t``; structured data is plain text, HTML
    pages escape it)."""
    flat = _MARKDOWN_LINK.sub(r"\1", " ".join(text.split()))
    pieces, position = [], 0
    for start, end in code_spans(flat) or []:
        pieces += [_drop_marks(flat[position:start]), _code_text(flat[start:end])]
        position = end
    pieces.append(_drop_marks(flat[position:]))
    return "".join(pieces)


def meta_text(text: str, limit: int = 160) -> str:
    """Plain text for a meta description or a search result snippet: Markdown marks and
    link targets removed, cut at a word to fewer than ``limit`` characters, escaped."""
    flat = unmarked(text)
    if len(flat) >= limit:
        flat = flat[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
    return html.escape(flat, quote=True)


# Where a message's head ends and its detail begins: an alternative, the end of a
# sentence or clause (not the dots of an elided ``...``), a closing note in parentheses.
_CLAUSE_END = re.compile(r" \(| / | - |(?<!\.)[.;!?](?= )")


def _closes_at_end(text: str, start: int) -> bool:
    """Whether the parenthesis opened at ``start`` closes as the text ends: a note after
    the message (``... (tied weights)``), not a part of it (``3D (unbatched) or 4D``)."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index == len(text) - 1
    return False


HEAD_TITLE_LIMIT = 70
SHORTEST_HEAD = 24


def head_title(text: str, limit: int = HEAD_TITLE_LIMIT) -> str:
    """``message_head``, escaped for the page's HTML head."""
    return html.escape(message_head(text, limit), quote=True)


def message_head(text: str, limit: int = HEAD_TITLE_LIMIT) -> str:
    """A title for a web search result, as plain text: the whole title when it is short;
    else the message's head, the longest run of whole clauses that fits (``CUDA error:
    device-side assert triggered``); else the whole title all the same, since a cut
    inside a clause leaves a title that no longer says what failed."""
    flat = unmarked(text)
    if len(flat) <= limit:
        return flat
    head = None
    for match in _CLAUSE_END.finditer(flat):
        if match.group() == " (" and not _closes_at_end(flat, match.start() + 1):
            continue
        cut = flat[: match.start()].rstrip(" ,;:")
        if len(cut) > limit:
            break
        balanced = all(cut.count(a) == cut.count(b) for a, b in ("()", "[]", "{}"))
        if len(cut) >= SHORTEST_HEAD and balanced:
            head = cut
    return head or flat


def plain(value: object) -> str:
    """Text from a verification record, or an address shown as a link's text, as literal
    Markdown: no markup, link, code or emphasis (``/_foo_/`` stays as it is)."""
    escaped = html.escape(" ".join(str(value).split()), quote=False)
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", escaped)


def link_text(text: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", " ".join(text.split()))


def first_sentence(text: str) -> str:
    """The text up to its first sentence end outside code: a cut inside a code span would
    leave its backtick unpaired and free the markup it held."""
    flat = " ".join(text.split())
    spans = iter(code_spans(flat) or [])
    span = next(spans, None)
    for match in re.finditer(r"(?<=[.!?])\s", flat):
        while span is not None and span[1] <= match.start():
            span = next(spans, None)
        if span is None or match.start() < span[0]:
            return flat[: match.start()]
    return flat


# Characters YAML reads as line breaks or a byte-order mark even inside a quoted string.
_YAML_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029", 0xFEFF: "\\ufeff"}


def front_matter_value(value: object) -> str:
    """A value for the page's YAML front matter, written as JSON (valid YAML flow syntax).

    Characters outside the BMP stay literal: JSON writes them as surrogate-pair escapes,
    which PyYAML decodes to two lone surrogates, and mkdocs then drops the page's whole front
    matter (its title, description and search terms) without a word.
    """
    return json.dumps(value, ensure_ascii=False).translate(_YAML_BREAKS)


def indent_block(text: str, width: int = 4) -> str:
    """Indent every non-blank line by ``width`` spaces (content of admonitions, lists)."""
    return "\n".join((" " * width + line) if line.strip() else "" for line in text.splitlines())


# The names the templates use.
MARKDOWN_FILTERS: dict[str, Callable[..., Any]] = {
    "fence": fence,
    "preformatted": preformatted,
    "inline_code": inline_code,
    "cell": table_cell,
    "page_text": page_text,
    "meta_text": meta_text,
    "head_title": head_title,
    "plain": plain,
    "link_text": link_text,
    "first_sentence": first_sentence,
    "front_matter": front_matter_value,
    "indent_block": indent_block,
}
