"""Markdown filters for the page templates: text from entries placed safely in Markdown
(code fences no backtick can close, table cells, link texts, front matter values)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(re.escape(char) + "+", text)
    return max((len(run) for run in runs), default=0)


def fence(text: str, language: str = "text") -> str:
    """A fenced code block that no backtick run inside ``text`` can close early."""
    marker = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{marker}{language}\n{text.rstrip()}\n{marker}"


def preformatted(text: str) -> str:
    """A plain ``<pre><code>`` block for verbatim text (signatures, diagrams).

    Emitted as HTML rather than a fenced block: these blocks need no highlighting, and
    running Pygments on every one of them was the largest single cost of a site build.
    """
    return f"<pre><code>{html.escape(text.rstrip(), quote=False)}</code></pre>"


def inline_code(text: str) -> str:
    marker = "`" * (_longest_run(text, "`") + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{marker}{padding}{text}{padding}{marker}"


def table_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def link_text(text: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", " ".join(text.split()))


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", flat)
    return flat[: match.start()] if match else flat


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
    "link_text": link_text,
    "first_sentence": first_sentence,
    "front_matter": front_matter_value,
    "indent_block": indent_block,
}
