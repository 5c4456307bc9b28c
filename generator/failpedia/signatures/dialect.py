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
single character or class; any repeat of a group other than ``?``; two unbounded repeats
that can match the same characters with nothing required between them that the first
cannot match (``\\d*\\d*``, ``.*\\s+``), whose backtracking grows polynomially with the
line; patterns without a fixed literal core of at least ``MIN_LITERAL`` characters,
which would match unrelated lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MIN_LITERAL = 6
MAX_REPEAT = 1000
METACHARACTERS = set(".^$*+?()[]{}|\\/")
CLASS_ESCAPES = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": "\\t\\n\\v\\f\\r ",
}
CLASS_ESCAPE_CHARS = {
    "d": "0123456789",
    "w": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
    "s": "\t\n\v\f\r ",
}
LITERAL_ESCAPES = {"t": "\t"}
REPEAT = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
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


@dataclass(frozen=True)
class _Chars:
    """The characters an atom can match: an ASCII set, and whether any non-ASCII one."""

    ascii: frozenset[str]
    other: bool = False

    def __or__(self, other: _Chars) -> _Chars:
        return _Chars(self.ascii | other.ascii, self.other or other.other)

    def overlaps(self, other: _Chars) -> bool:
        return bool(self.ascii & other.ascii) or (self.other and other.other)

    def negated(self) -> _Chars:
        return _Chars(_ALL_ASCII - self.ascii, True)

    @staticmethod
    def of(text: str) -> _Chars:
        return _Chars(frozenset(c for c in text if ord(c) < 128), any(ord(c) >= 128 for c in text))


_ALL_ASCII = frozenset(chr(code) for code in range(128))
_DOT_CHARS = _Chars.of("\n\r").negated()


def _union(first: _Chars | None, second: _Chars | None) -> _Chars | None:
    if first is None:
        return second
    return first if second is None else first | second


@dataclass
class _Sequence:
    """One alternative, parsed: canonical text, longest fixed literal, repeat bookkeeping.

    ``pending`` holds the characters of unbounded repeats not yet followed by a required
    character they cannot match; ``repeats`` those of every unbounded repeat inside.
    """

    text: str = ""
    literal: str = ""
    pending: _Chars | None = None
    repeats: _Chars | None = None


@dataclass
class _Atom:
    text: str
    literal: str | None = None  # the fixed character it stands for
    chars: _Chars | None = None  # set for single-character atoms
    branches: list[_Sequence] = field(default_factory=list)  # set for groups
    is_group: bool = False


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
        return "|".join(branch.text for branch in branches), [b.literal for b in branches]

    def alternation(self) -> list[_Sequence]:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches

    def sequence(self) -> _Sequence:
        result = _Sequence()
        parts: list[str] = []
        run = ""
        while self.pos < len(self.source) and self.peek() not in "|)":
            start = self.pos
            atom = self.atom()
            quantifier, low, high = self.quantifier(atom, start)
            parts.append(atom.text + quantifier)
            run = run + atom.literal if atom.literal is not None and not quantifier else ""
            if len(run) > len(result.literal):
                result.literal = run
            self.track_repeats(result, atom, low, high, start)
        result.text = "".join(parts)
        return result

    def track_repeats(
        self, result: _Sequence, atom: _Atom, low: int, high: int | None, start: int
    ) -> None:
        """Refuse an unbounded repeat that can take over characters an earlier one matched."""
        if atom.is_group:
            inner = None
            for branch in atom.branches:
                inner = _union(inner, branch.repeats)
            if inner is not None and result.pending is not None and result.pending.overlaps(inner):
                raise self._overlap(start)
            for branch in atom.branches:
                result.pending = _union(result.pending, branch.pending)
            result.repeats = _union(result.repeats, inner)
            return
        if atom.chars is None:  # anchors and word boundaries match no character
            return
        if high is None:
            if result.pending is not None and result.pending.overlaps(atom.chars):
                raise self._overlap(start)
            result.pending = _union(result.pending, atom.chars)
            result.repeats = _union(result.repeats, atom.chars)
        elif low >= 1 and result.pending is not None and not result.pending.overlaps(atom.chars):
            result.pending = None

    def _overlap(self, start: int) -> PatternError:
        return self.fail(
            "this repeat can match the same characters as an earlier one with nothing "
            "required in between that the first cannot match (as in '\\d*\\d*' or "
            "'.*\\s+'), which backtracks polynomially on long lines; put a required "
            "character between them, e.g. '\\d+x\\d+', or merge them into one class",
            start,
        )

    def atom(self) -> _Atom:
        char = self.peek()
        if char == "(":
            return self.group()
        if char == "[":
            return self.char_class()
        if char == "\\":
            return self.escape()
        if char == ".":
            self.pos += 1
            return _Atom(DOT, chars=_DOT_CHARS)
        if char in "^$":
            self.pos += 1
            return _Atom(char)
        if char in "*+?":
            raise self.fail(f"'{char}' has nothing to repeat; escape it as '\\{char}'")
        if char in "{}]":
            raise self.fail(f"escape a literal '{char}' as '\\{char}'")
        if char == "\n":
            raise self.fail("patterns match within one line; a newline cannot occur")
        self.pos += 1
        return _Atom(escape_literal(char), literal=char, chars=_Chars.of(char))

    def escape(self) -> _Atom:
        start = self.pos
        self.pos += 1
        char = self.peek()
        if not char:
            raise self.fail("pattern ends with a lone backslash", start)
        self.pos += 1
        if char in METACHARACTERS or char == "-":
            return _Atom(escape_literal(char), literal=char, chars=_Chars.of(char))
        if char.lower() in CLASS_ESCAPES:
            ranges = CLASS_ESCAPES[char.lower()]
            chars = _Chars.of(CLASS_ESCAPE_CHARS[char.lower()])
            if char.isupper():
                return _Atom(f"[^{ranges}]", chars=chars.negated())
            return _Atom(f"[{ranges}]", chars=chars)
        if char in "bB":
            return _Atom("\\" + char)
        if char in LITERAL_ESCAPES:
            literal = LITERAL_ESCAPES[char]
            return _Atom("\\" + char, literal=literal, chars=_Chars.of(literal))
        if char.isdigit():
            raise self.fail("backreferences are not allowed", start)
        if char == "n":
            raise self.fail("patterns match within one line; '\\n' cannot occur", start)
        raise self.fail(
            f"'\\{char}' is not in the portable dialect (its meaning differs between Python "
            "and JavaScript or it is not a regex escape)",
            start,
        )

    def group(self) -> _Atom:
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
        text = "(?:" + "|".join(branch.text for branch in branches) + ")"
        return _Atom(text, branches=branches, is_group=True)

    def char_class(self) -> _Atom:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        items: list[str] = []
        chars = _Chars(frozenset())
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
            low_text, low, low_chars = self.class_member()
            if self.peek() == "-" and self.source[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high_text, high, _ = self.class_member()
                if low is None or high is None:
                    raise self.fail("a range needs a single character at each end")
                if ord(high) < ord(low):
                    raise self.fail(f"range '{low}-{high}' is out of order")
                items.append(f"{low_text}-{high_text}")
                span = "".join(chr(code) for code in range(ord(low), min(ord(high), 127) + 1))
                chars = chars | _Chars(_Chars.of(span).ascii, ord(high) >= 128)
            else:
                items.append(low_text)
                chars = chars | low_chars
        text = "[" + ("^" if negated else "") + "".join(items) + "]"
        return _Atom(text, chars=chars.negated() if negated else chars)

    def class_member(self) -> tuple[str, str | None, _Chars]:
        """One class member: canonical text, the single character (None for ``\\d`` etc.)."""
        char = self.peek()
        if char == "[":
            raise self.fail("escape a literal '[' inside a class as '\\['")
        if char == "\n":
            raise self.fail("patterns match within one line; a newline cannot occur")
        if char != "\\":
            self.pos += 1
            return self._class_literal(char), char, _Chars.of(char)
        start = self.pos
        self.pos += 1
        escaped = self.peek()
        self.pos += 1
        if escaped in CLASS_ESCAPES:
            return CLASS_ESCAPES[escaped], None, _Chars.of(CLASS_ESCAPE_CHARS[escaped])
        if escaped in LITERAL_ESCAPES:
            literal = LITERAL_ESCAPES[escaped]
            return self._class_literal(literal), literal, _Chars.of(literal)
        if escaped and (escaped in METACHARACTERS or escaped in "-^"):
            return self._class_literal(escaped), escaped, _Chars.of(escaped)
        raise self.fail(f"'\\{escaped}' is not allowed inside a character class", start)

    @staticmethod
    def _class_literal(char: str) -> str:
        if char in "\\]^-[":
            return "\\" + char
        if char == "\t":
            return "\\t"
        return char

    def quantifier(self, atom: _Atom, atom_start: int) -> tuple[str, int, int | None]:
        """Parse a quantifier after an atom: its text and bounds (1, 1 when there is none).

        Only single characters and classes may repeat without bound: with no repeated
        groups, no pattern can nest unbounded repeats, the cause of catastrophic
        backtracking.
        """
        char = self.peek()
        start = self.pos
        if char in ("*", "+", "?"):
            self.pos += 1
            text = char
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        elif char == "{":
            match = REPEAT.match(self.source, self.pos)
            if not match:
                raise self.fail("write a repeat as '{n}', '{n,}' or '{n,m}', or escape '\\{'")
            low = int(match.group(1))
            high_text = match.group(3)
            high = low if match.group(2) is None else (int(high_text) if high_text else None)
            if low > MAX_REPEAT or (high is not None and high > MAX_REPEAT):
                raise self.fail(f"repeat counts above {MAX_REPEAT} are not allowed")
            if high is not None and high < low:
                raise self.fail("repeat '{n,m}' needs n <= m")
            self.pos = match.end()
            text = match.group(0)
        else:
            return "", 1, 1
        if self.peek() == "?":
            self.pos += 1
            text += "?"
        if self.peek() and self.peek() in "*+?{":
            raise self.fail("a quantifier cannot follow another quantifier")
        if not atom.is_group and atom.chars is None:
            raise self.fail("an anchor cannot be repeated", start)
        if atom.is_group and text not in ("?", "??"):
            raise self.fail(
                "only '?' may follow a group: repeating a group can backtrack "
                "catastrophically; repeat a character or class instead, e.g. '[\\d, ]+'",
                start,
            )
        return text, low, high
