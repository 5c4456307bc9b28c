"""The portable signature-pattern dialect: parse, check, and compile to one canonical regex.

Signature patterns run in two engines: Python (``failpedia diagnose``) and JavaScript (the
site's log page). This module accepts a small regex dialect whose every construct means
the same in both, refuses anything that could backtrack catastrophically, and rewrites
the pattern into a canonical form (``\\d`` -> ``[0-9]``, ``.`` -> ``[^\\n\\r]`` ...) that
both engines then compile. Patterns match within one line of a log.

Accepted: literal characters; escaped metacharacters; ``\\d \\D \\w \\W \\s \\S \\b \\B \\t``;
character classes ``[...]`` and ``[^...]`` with ranges; ``.``; groups ``(...)`` and
``(?:...)``; alternation ``|``; anchors ``^`` and ``$``; quantifiers ``* + ? {n} {n,}
{n,m}`` with an optional lazy ``?``.

Refused: backreferences, lookaround, named groups, inline flags, ``\\A \\Z \\n`` and other
escapes whose meaning differs; an unbounded repeat (``* + {n,}``) of anything but a
single character or class; any repeat of a group other than ``?``; patterns without a
fixed literal core of at least ``MIN_LITERAL`` characters, which would match unrelated
lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_LITERAL = 6
MAX_REPEAT = 1000
METACHARACTERS = set(".^$*+?()[]{}|\\/")
CLASS_ESCAPES = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": "\\t\\n\\v\\f\\r ",
}
LITERAL_ESCAPES = {"t": "\t"}
DOT = "[^\\n\\r\\u2028\\u2029]"


class PatternError(ValueError):
    """A pattern outside the dialect; the message says where and what to write instead."""


@dataclass(frozen=True)
class CompiledPattern:
    """A checked pattern, its canonical text for both engines, and its literal core."""

    source: str
    canonical: str
    literals: tuple[str, ...]
    regex: re.Pattern[str]

    def search(self, line: str) -> re.Match[str] | None:
        return self.regex.search(line)


def compile_pattern(source: str) -> CompiledPattern:
    """Check ``source`` against the dialect and compile its canonical form."""
    if not source:
        raise PatternError("pattern is empty")
    parser = _Parser(source)
    canonical, branch_literals = parser.parse()
    short = [literal for literal in branch_literals if len(literal) < MIN_LITERAL]
    if short:
        raise PatternError(
            f"needs a fixed literal of at least {MIN_LITERAL} characters outside groups "
            f"and repeats in every alternative (longest found: {short[0]!r}), so that it "
            "cannot match unrelated lines"
        )
    try:
        regex = re.compile(canonical, re.ASCII)
    except re.error as error:  # pragma: no cover - the parser should refuse first
        raise PatternError(f"not a valid regular expression: {error}") from None
    return CompiledPattern(source, canonical, tuple(branch_literals), regex)


def escape_literal(char: str) -> str:
    return "\\" + char if char in METACHARACTERS else char


def pattern_for_text(text: str) -> str:
    """A dialect pattern matching the first non-blank line of ``text`` literally."""
    line = next((item.strip() for item in text.splitlines() if item.strip()), "")
    return "".join(escape_literal(char) for char in line)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0

    def fail(self, message: str, pos: int | None = None) -> PatternError:
        column = (self.pos if pos is None else pos) + 1
        return PatternError(f"column {column}: {message}")

    def peek(self) -> str:
        return self.source[self.pos] if self.pos < len(self.source) else ""

    def parse(self) -> tuple[str, list[str]]:
        branches = self.alternation()
        if self.pos < len(self.source):
            raise self.fail("unmatched ')'; escape it as '\\)'")
        canonical = "|".join(text for text, _ in branches)
        return canonical, [literal for _, literal in branches]

    def alternation(self) -> list[tuple[str, str]]:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches

    def sequence(self) -> tuple[str, str]:
        """One alternative: its canonical text and its longest run of fixed literal text."""
        parts: list[str] = []
        longest = ""
        run = ""
        while self.pos < len(self.source) and self.peek() not in "|)":
            start = self.pos
            text, literal, single_char = self.atom()
            quantifier, optional_or_repeated = self.quantifier(single_char, start)
            parts.append(text + quantifier)
            if literal is not None and not optional_or_repeated:
                run += literal
            else:
                run = ""
            if len(run) > len(longest):
                longest = run
        return "".join(parts), longest

    def atom(self) -> tuple[str, str | None, bool]:
        """Canonical text, the literal it stands for (if fixed), whether it is one character."""
        char = self.peek()
        if char == "(":
            return self.group(), None, False
        if char == "[":
            return self.char_class(), None, True
        if char == "\\":
            return self.escape()
        if char == ".":
            self.pos += 1
            return DOT, None, True
        if char in "^$":
            self.pos += 1
            return char, None, False
        if char in "*+?":
            raise self.fail(f"'{char}' has nothing to repeat; escape it as '\\{char}'")
        if char in "{}]":
            raise self.fail(f"escape a literal '{char}' as '\\{char}'")
        self.pos += 1
        if char == "\n":
            raise self.fail("patterns match within one line; a newline cannot occur")
        return escape_literal(char), char, True

    def escape(self) -> tuple[str, str | None, bool]:
        start = self.pos
        self.pos += 1
        char = self.peek()
        if not char:
            raise self.fail("pattern ends with a lone backslash", start)
        self.pos += 1
        if char in METACHARACTERS or char in "-":
            return escape_literal(char), char, True
        if char.lower() in CLASS_ESCAPES:
            ranges = CLASS_ESCAPES[char.lower()]
            return (f"[^{ranges}]" if char.isupper() else f"[{ranges}]"), None, True
        if char in "bB":
            return "\\" + char, None, False
        if char in LITERAL_ESCAPES:
            return "\\" + char, LITERAL_ESCAPES[char], True
        if char.isdigit():
            raise self.fail("backreferences are not allowed", start)
        if char == "n":
            raise self.fail("patterns match within one line; '\\n' cannot occur", start)
        raise self.fail(
            f"'\\{char}' is not in the portable dialect (its meaning differs between Python "
            "and JavaScript or it is not a regex escape)",
            start,
        )

    def group(self) -> str:
        start = self.pos
        self.pos += 1
        if self.source.startswith("?:", self.pos):
            self.pos += 2
        elif self.peek() == "?":
            rest = self.source[self.pos : self.pos + 3]
            if rest.startswith(("?=", "?!", "?<=", "?<!")):
                what = "lookaround is"
            elif rest.startswith(("?P", "?<")):
                what = "named groups are"
            else:
                what = "inline flags and extensions are"
            raise self.fail(f"{what} not allowed; use '(...)' or '(?:...)'", start)
        branches = self.alternation()
        if self.peek() != ")":
            raise self.fail("unclosed group '('", start)
        self.pos += 1
        return "(?:" + "|".join(text for text, _ in branches) + ")"

    def char_class(self) -> str:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        items: list[str] = []
        first = True
        while True:
            char = self.peek()
            if not char:
                raise self.fail("unclosed character class '['", start)
            if char == "]" and not first:
                self.pos += 1
                break
            if char == "]":
                raise self.fail("empty character class; escape a literal ']' as '\\]'")
            first = False
            low = self.class_char()
            if self.peek() == "-" and self.source[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = self.class_char()
                if len(low) != 1 or len(high) != 1:
                    raise self.fail("a range needs a single character at each end")
                if ord(high) < ord(low):
                    raise self.fail(f"range '{low}-{high}' is out of order")
                items.append(self._class_literal(low) + "-" + self._class_literal(high))
            elif len(low) == 1:
                items.append(self._class_literal(low))
            else:
                items.append(low)
        return "[" + ("^" if negated else "") + "".join(items) + "]"

    def class_char(self) -> str:
        """One class member: a single character, or expanded ranges for ``\\d \\w \\s``."""
        char = self.peek()
        if char == "[":
            raise self.fail("escape a literal '[' inside a class as '\\['")
        if char == "\n":
            raise self.fail("patterns match within one line; a newline cannot occur")
        if char != "\\":
            self.pos += 1
            return char
        start = self.pos
        self.pos += 1
        escaped = self.peek()
        self.pos += 1
        if escaped in CLASS_ESCAPES:
            return CLASS_ESCAPES[escaped]
        if escaped in LITERAL_ESCAPES:
            return LITERAL_ESCAPES[escaped]
        if escaped and (escaped in METACHARACTERS or escaped in "-^"):
            return escaped
        raise self.fail(f"'\\{escaped}' is not allowed inside a character class", start)

    @staticmethod
    def _class_literal(char: str) -> str:
        if char in "\\]^-[":
            return "\\" + char
        if char == "\t":
            return "\\t"
        return char

    def quantifier(self, single_char: bool, atom_start: int) -> tuple[str, bool]:
        """Parse a quantifier after an atom; return it and whether there was one.

        Only single characters and classes may repeat without bound: with no repeated
        groups, no pattern can nest unbounded repeats, the cause of catastrophic
        backtracking.
        """
        char = self.peek()
        start = self.pos
        if char in ("*", "+", "?"):
            self.pos += 1
            text = char
        elif char == "{":
            match = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.source, self.pos)
            if not match:
                raise self.fail("write a repeat as '{n}', '{n,}' or '{n,m}', or escape '\\{'")
            low = int(match.group(1))
            high = match.group(3)
            if low > MAX_REPEAT or (high and int(high) > MAX_REPEAT):
                raise self.fail(f"repeat counts above {MAX_REPEAT} are not allowed")
            if high and int(high) < low:
                raise self.fail("repeat '{n,m}' needs n <= m")
            self.pos = match.end()
            text = match.group(0)
        else:
            return "", False
        if self.peek() == "?":
            self.pos += 1
            text += "?"
        if self.peek() in ("*", "+", "?", "{") and self.peek():
            raise self.fail("a quantifier cannot follow another quantifier")
        atom = self.source[atom_start:start]
        if atom in ("^", "$") or atom.startswith("\\b") or atom.startswith("\\B"):
            raise self.fail("an anchor cannot be repeated", start)
        if not single_char and text not in ("?", "??"):
            raise self.fail(
                "only '?' may follow a group: repeating a group can backtrack "
                "catastrophically; repeat a character or class instead, e.g. '[\\d, ]+'",
                start,
            )
        return text, True
