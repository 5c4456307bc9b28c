"""The portable signature-pattern dialect: parse, check, and compile to one canonical regex.

Signature patterns run in two engines: Python (``failpedia diagnose``) and JavaScript (the
site's log page, which compiles them with the ``u`` flag, so that both read a line as
Unicode code points). This module accepts a small regex dialect whose every construct
means the same in both, refuses anything that could backtrack catastrophically, and
rewrites the pattern into a canonical form (``\\d`` -> ``[0-9]``,
``.`` -> ``[^\\n\\r\\u2028\\u2029]`` ...) that both engines then compile. Patterns match
within one line of a log.

Accepted: literal characters; escaped metacharacters; ``\\d \\D \\w \\W \\s \\S \\b \\B \\t``;
character classes ``[...]`` and ``[^...]`` with ranges; ``.``; groups ``(...)`` and
``(?:...)``; alternation ``|``; anchors ``^`` and ``$``; quantifiers ``* + ? {n} {n,}
{n,m}`` with an optional lazy ``?``.

Refused: backreferences, lookaround, named groups, inline flags, ``\\A \\Z \\n`` and other
escapes whose meaning differs; lone surrogates (no decoded text holds one); an unbounded
repeat (``* + {n,}``) of anything but a single character or class; any repeat of a group
other than ``?``; repeats, optional parts and alternatives that can backtrack
super-linearly or in too many ways (``backtracking``); patterns longer than
``MAX_PATTERN_LENGTH`` or without a fixed literal core of at least ``MIN_LITERAL``
characters, which would match unrelated lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from failpedia.signatures.backtracking import (
    NO_CHARS,
    Backtracking,
    BacktrackingError,
    Chars,
    alike_alternatives,
)

MIN_LITERAL = 6
MAX_PATTERN_LENGTH = 2000
# The counts written in '{n}', '{n,}' and '{n,m}' add up to at most this: each counted
# repeat is unrolled by the matching engines, and Hyperscan takes seconds to build (or
# refuses) a pattern with many large ones.
MAX_REPEAT_TOTAL = 300
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


def compile_pattern(source: str, min_literal: int = MIN_LITERAL) -> CompiledPattern:
    """Check ``source`` against the dialect and compile its canonical form.

    ``min_literal`` is the fixed literal every alternative needs: a signature must not
    match unrelated lines, but a redaction rule (``redaction``) matches what has no fixed
    text, such as a password."""
    if not source:
        raise PatternError("pattern is empty")
    if len(source) > MAX_PATTERN_LENGTH:
        raise PatternError(
            f"is {len(source)} characters long; at most {MAX_PATTERN_LENGTH} are allowed "
            "(match the message's distinctive part)"
        )
    surrogate = next((at for at, char in enumerate(source) if "\ud800" <= char <= "\udfff"), None)
    if surrogate is not None:
        raise PatternError(
            f"column {surrogate + 1}: a lone surrogate (U+{ord(source[surrogate]):04X}) "
            "cannot occur in a decoded log line; write the character itself"
        )
    parser = _Parser(source)
    canonical, branch_literals = parser.parse()
    short = [literal for literal in branch_literals if len(literal) < min_literal]
    if short:
        raise PatternError(
            f"needs a fixed literal of at least {min_literal} characters outside groups "
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


_DOT_CHARS = Chars.of("\n\r\u2028\u2029").negated()


@dataclass
class _Sequence:
    """One alternative, parsed: canonical text, longest fixed literal, how much it can
    backtrack, its leading fixed characters (``head``) and every character it can match."""

    tracker: Backtracking
    text: str = ""
    literal: str = ""
    head: list[Chars] = field(default_factory=list)
    head_open: bool = True
    chars: Chars = NO_CHARS


@dataclass
class _Atom:
    text: str
    literal: str | None = None  # the fixed character it stands for
    chars: Chars | None = None  # set for single-character atoms
    branches: list[_Sequence] = field(default_factory=list)  # set for groups
    is_group: bool = False


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.repeat_total = 0

    def fail(self, message: str, pos: int | None = None) -> PatternError:
        column = (self.pos if pos is None else pos) + 1
        return PatternError(f"column {column}: {message}")

    def peek(self) -> str:
        return self.source[self.pos] if self.pos < len(self.source) else ""

    def parse(self) -> tuple[str, list[str]]:
        branches = self.alternation(Backtracking())
        if self.pos < len(self.source):
            raise self.fail("unmatched ')'; escape it as '\\)'")
        return "|".join(branch.text for branch in branches), [b.literal for b in branches]

    def alternation(self, start: Backtracking) -> list[_Sequence]:
        """The alternatives from here to the next unmatched ``)``, each continuing from
        the backtracking state ``start``."""
        branches = [self.sequence(start)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence(start))
        return branches

    def sequence(self, start: Backtracking) -> _Sequence:
        result = _Sequence(start.copy())
        parts: list[str] = []
        run = ""
        while self.pos < len(self.source) and self.peek() not in "|)":
            position = self.pos
            atom = self.atom(result.tracker)
            quantifier, low, high = self.quantifier(atom, position)
            parts.append(atom.text + quantifier)
            run = run + atom.literal if atom.literal is not None and not quantifier else ""
            if len(run) > len(result.literal):
                result.literal = run
            try:
                self.track(result, atom, low, high)
            except BacktrackingError as error:
                raise self.fail(str(error), position) from None
        result.text = "".join(parts)
        return result

    @staticmethod
    def track(result: _Sequence, atom: _Atom, low: int, high: int | None) -> None:
        """Account for one quantified atom: what it can match, its leading fixed
        characters, and how much it adds to backtracking."""
        fixed_character = atom.chars is not None and low == high == 1
        if result.head_open and fixed_character and atom.chars is not None:
            result.head.append(atom.chars)
        else:
            result.head_open = False
        if atom.is_group:
            optional = low == 0
            states = [branch.tracker for branch in atom.branches]
            chars = NO_CHARS
            for branch in atom.branches:
                chars = chars | branch.chars
            choices = alike_alternatives([branch.head for branch in atom.branches]) + optional
            result.tracker = Backtracking.after_group(
                [*states, result.tracker] if optional else states, choices, chars
            )
            result.chars = result.chars | chars
        elif atom.chars is not None:  # anchors and word boundaries match no character
            result.tracker.repeat(atom.chars, low, high)
            result.chars = result.chars | atom.chars

    def atom(self, tracker: Backtracking) -> _Atom:
        char = self.peek()
        if char == "(":
            return self.group(tracker)
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
        return _Atom(escape_literal(char), literal=char, chars=Chars.of(char))

    def escape(self) -> _Atom:
        start = self.pos
        self.pos += 1
        char = self.peek()
        if not char:
            raise self.fail("pattern ends with a lone backslash", start)
        self.pos += 1
        if char in METACHARACTERS or char == "-":
            return _Atom(escape_literal(char), literal=char, chars=Chars.of(char))
        if char.lower() in CLASS_ESCAPES:
            ranges = CLASS_ESCAPES[char.lower()]
            chars = Chars.of(CLASS_ESCAPE_CHARS[char.lower()])
            if char.isupper():
                return _Atom(f"[^{ranges}]", chars=chars.negated())
            return _Atom(f"[{ranges}]", chars=chars)
        if char in "bB":
            return _Atom("\\" + char)
        if char in LITERAL_ESCAPES:
            literal = LITERAL_ESCAPES[char]
            return _Atom("\\" + char, literal=literal, chars=Chars.of(literal))
        if char.isdigit():
            raise self.fail("backreferences are not allowed", start)
        if char == "n":
            raise self.fail("patterns match within one line; '\\n' cannot occur", start)
        raise self.fail(
            f"'\\{char}' is not in the portable dialect (its meaning differs between Python "
            "and JavaScript or it is not a regex escape)",
            start,
        )

    def group(self, tracker: Backtracking) -> _Atom:
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
        branches = self.alternation(tracker)
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
        chars = Chars(frozenset())
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
                chars = chars | Chars(Chars.of(span).ascii, ord(high) >= 128)
            else:
                items.append(low_text)
                chars = chars | low_chars
        text = "[" + ("^" if negated else "") + "".join(items) + "]"
        return _Atom(text, chars=chars.negated() if negated else chars)

    def class_member(self) -> tuple[str, str | None, Chars]:
        """One class member: canonical text, the single character (None for ``\\d`` etc.)."""
        char = self.peek()
        if char == "[":
            raise self.fail("escape a literal '[' inside a class as '\\['")
        if char == "\n":
            raise self.fail("patterns match within one line; a newline cannot occur")
        if char != "\\":
            self.pos += 1
            return self._class_literal(char), char, Chars.of(char)
        start = self.pos
        self.pos += 1
        escaped = self.peek()
        self.pos += 1
        if escaped in CLASS_ESCAPES:
            return CLASS_ESCAPES[escaped], None, Chars.of(CLASS_ESCAPE_CHARS[escaped])
        if escaped in LITERAL_ESCAPES:
            literal = LITERAL_ESCAPES[escaped]
            return self._class_literal(literal), literal, Chars.of(literal)
        if escaped and (escaped in METACHARACTERS or escaped in "-^"):
            return self._class_literal(escaped), escaped, Chars.of(escaped)
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
            self.repeat_total += low if high is None else high
            if self.repeat_total > MAX_REPEAT_TOTAL:
                raise self.fail(
                    f"the counts of '{{n,m}}' repeats add up to more than {MAX_REPEAT_TOTAL} "
                    "here, which makes the compiled matcher slow to build; use '+' or '*' "
                    "where the count does not matter"
                )
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
