"""Property tests of the pattern dialect: ``compile_pattern`` either refuses a string with
PatternError or returns a canonical regex that Python compiles, with no backreference or
lookaround, no repeated group, and the same matches as the source on single lines; it
never hangs, and what it accepts runs on the most hostile lines within a bound."""

from __future__ import annotations

import re
from re import _constants as sre
from re import _parser as sre_parse

import pytest
from failpedia.diagnose.exact import ExactPattern
from failpedia.signatures.dialect import MIN_LITERAL, CompiledPattern, PatternError, compile_pattern
from failpedia.signatures.line_rules import LINE_CAP
from helpers import cpu_time_limit, time_limit
from hypothesis import example, given, settings
from hypothesis import strategies as st

PATTERN_PIECES = [
    "FooError",
    ": widget ",
    "count",
    "\\d",
    "\\w",
    "\\s",
    "\\D",
    "\\W",
    "\\S",
    "\\b",
    "\\B",
    "\\t",
    "\\n",
    "\\1",
    "\\A",
    "\\.",
    "\\(",
    "\\-",
    "\\/",
    ".",
    "^",
    "$",
    "*",
    "+",
    "?",
    "??",
    "*?",
    "{2}",
    "{1,3}",
    "{2,}",
    "{,2}",
    "{3,1}",
    "{1001}",
    "(",
    ")",
    "(?:",
    "(?=",
    "(?!",
    "(?<=",
    "(?<!",
    "(?P<n>",
    "(?<n>",
    "(?i)",
    "|",
    "[",
    "]",
    "[^",
    "a-z",
    "0-9",
    "\\]",
    "-",
    "{",
    "}",
    "\\",
    "/",
    "\u00e9",
    " ",
    ",",
    "\x00",
    "\r",
]
ATOMS = [
    "\\d",
    "\\w",
    "\\s",
    "\\D",
    "\\W",
    "\\S",
    "\\t",
    "\\.",
    "\\(",
    "\\-",
    "\\/",
    "\\{",
    ".",
    "[a-z]",
    "[^0-9]",
    "[\\d, ]",
    "[-a]",
    "[\\]x]",
    "(?:ab|cd)",
    "(x)",
    "(?:)",
    "x",
    " ",
    ":",
    "e",
]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "+?", "??"]
ANCHORS = ["", "", "^", "$", "\\b", "\\B"]
CORES = ["FooError: ", "widget count", "Error\\: ", "jammed in slot"]
PIECE = st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)).map("".join)


@st.composite
def dialect_patterns(draw):
    """Mostly patterns the dialect accepts, sometimes with one refused piece mixed in."""
    branches = []
    for _ in range(draw(st.integers(1, 3))):
        before = "".join(draw(st.lists(PIECE | st.sampled_from(ANCHORS), max_size=4)))
        after = "".join(draw(st.lists(PIECE | st.sampled_from(ANCHORS), max_size=4)))
        branches.append(before + draw(st.sampled_from(CORES)) + after)
    pattern = "|".join(branches)
    if draw(st.booleans()):
        position = draw(st.integers(0, len(pattern)))
        piece = draw(st.sampled_from(PATTERN_PIECES))
        pattern = pattern[:position] + piece + pattern[position:]
    return pattern


PATTERNS = st.one_of(
    dialect_patterns(),
    st.lists(st.sampled_from(PATTERN_PIECES), max_size=12).map("".join),
    st.text(st.sampled_from(list(".^$*+?()[]{}|\\/-:dwsbBtnAZ1 aFoEr")), max_size=30),
    st.text(max_size=30),
)
REFUSED_OPS = {
    sre.GROUPREF,
    sre.GROUPREF_EXISTS,
    sre.ASSERT,
    sre.ASSERT_NOT,
    sre.ATOMIC_GROUP,
    sre.POSSESSIVE_REPEAT,
}
REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
SINGLE_CHARACTER_OPS = {sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY}


def walk(items):
    """Every (opcode, argument) in a parsed regex, depth first."""
    for op, av in items:
        yield op, av
        if op in REPEATS:
            yield from walk(av[2])
        elif op is sre.SUBPATTERN:
            yield from walk(av[3])
        elif op is sre.BRANCH:
            for branch in av[1]:
                yield from walk(branch)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            yield from walk(av[1])
        elif op is sre.ATOMIC_GROUP:
            yield from walk(av)
        elif op is sre.GROUPREF_EXISTS:
            yield from walk(av[1])
            if av[2] is not None:
                yield from walk(av[2])


def single_lines(alphabet):
    # Lines as a log holds them: no line breaks of any engine.
    return st.text(st.sampled_from(alphabet), max_size=30)


LINE_ALPHABET = list("FooError: widget count jammed in slot 0123456789abcdxz_-.,()[]{}/\\\t\u00e9")


@settings(max_examples=300, deadline=None)
@given(source=PATTERNS, lines=st.lists(single_lines(LINE_ALPHABET), max_size=5))
def test_compile_pattern_refuses_or_compiles_a_safe_regex(source, lines):
    with time_limit(2):
        try:
            compiled = compile_pattern(source)
        except PatternError as error:
            assert str(error).strip()
            return
    assert isinstance(compiled, CompiledPattern)
    assert compiled.source == source
    assert compiled.regex.pattern == compiled.canonical
    re.compile(compiled.canonical)  # also without re.ASCII
    assert compiled.literals and all(len(literal) >= MIN_LITERAL for literal in compiled.literals)
    tree = sre_parse.parse(compiled.canonical, re.ASCII)
    ops = list(walk(tree.data))
    assert not {op for op, _ in ops} & REFUSED_OPS, compiled.canonical
    for op, av in ops:
        if op in REPEATS and av[1] > 1:
            # Only one character or class may repeat more than once: no nested repeats.
            body = list(av[2])
            assert len(body) == 1 and body[0][0] in SINGLE_CHARACTER_OPS, compiled.canonical
    # Each literal core occurs in the source, so it is fixed text the pattern needs.
    for literal in compiled.literals:
        assert all(char in source or char == "\t" for char in literal), compiled.literals
    # On single lines the canonical form means what the source means in Python.
    try:
        python = re.compile(source, re.ASCII)
    except re.error:
        return
    with time_limit(2):
        for line in [*lines, *compiled.literals]:
            assert bool(compiled.search(line)) == bool(python.search(line)), (source, line)


@pytest.mark.parametrize(
    "source",
    [
        r"FooError: widget \1",
        r"FooError: (?=widget)",
        r"FooError: (?<!widget)x",
        r"FooError: (a+)+",
        r"FooError: (?:a|b)*",
        r"FooError: (ab){2}",
        r"FooError: (?P<n>x)",
        r"\d+\s\w+",
        r"FooError|x",
        "",
        "FooError: " + ".{0,1000}" * 4 + "x",
        "FooError: [a-z]*[a-z]{0,999}",
        "FooError: " + "a?" * 40 + "a" * 40,
        "FooError: " + "(?:aa|a)" * 40,
        "FooError: " + "(?:ab)?" * 40,
        "FooError: \ud800",
        "FooError: " + "x" * 3000,
        "FooError: x{301}",
        "FooError: " + "[^x]{0,100}x" * 4,
    ],
)
def test_known_bad_patterns_are_refused(source):
    with pytest.raises(PatternError):
        compile_pattern(source)


def test_canonical_form_of_a_good_pattern():
    compiled = compile_pattern(r"FooError: widget \d+ (?:jammed|stuck) at .\s?\w*")
    assert compiled.canonical == (
        "FooError: widget [0-9]+ (?:jammed|stuck) at [^\\n\\r\\u2028\\u2029][\\t\\n\\v\\f\\r ]?"
        "[A-Za-z0-9_]*"
    )
    assert compiled.literals == ("FooError: widget ",)
    assert compiled.search("x FooError: widget 12 stuck at 3 ab")
    assert not compiled.search("FooError: widget twelve stuck at 3")


def test_repeat_counts_are_ascii_digits():
    try:
        compiled = compile_pattern("FooError: a{\u0663}")
    except PatternError:
        return
    assert compiled.search("FooError: aaa")


# Parts that backtrack: repeats of every width, optional parts, alternatives that start
# alike, and classes that share characters with each other and with the cores.
ELASTIC_ATOMS = [".", "\\w", "\\D", "[a-z]", "[^:]", "[\\w.]", "e", "x"]
ELASTIC_GROUPS = ["(?:ab|a)", "(?:Error|Err)", "(?:x.*)", "(?:e?)", "(?:[a-z]+:)"]
WIDE = ["*", "+", "{2,}?", "{0,200}", "{3,40}", "{0,11}"]
NARROW = ["?", "??", "{0,10}", "{1,4}"]
ELASTIC_QUANTIFIERS = [*WIDE, *WIDE, *NARROW]
ELASTIC_PIECE = st.one_of(
    st.tuples(st.sampled_from(ELASTIC_ATOMS), st.sampled_from(ELASTIC_QUANTIFIERS)).map("".join),
    st.tuples(st.sampled_from(ELASTIC_GROUPS), st.sampled_from(["", "?", "??"])).map("".join),
    st.sampled_from(ATOMS),
)


@st.composite
def elastic_patterns(draw):
    """Patterns crowded with parts that can backtrack, around a literal core."""
    before = "".join(draw(st.lists(ELASTIC_PIECE, max_size=10)))
    after = "".join(draw(st.lists(ELASTIC_PIECE, max_size=10)))
    return before + draw(st.sampled_from(CORES)) + after


CANDIDATE_CHARS = [chr(code) for code in range(32, 127)] + ["\t", "\u00e9", "\u2028", "\U0001f600"]


def _accepts(body, char: str) -> bool:
    """Whether a repeated single-character body, as sre parsed it, accepts ``char``."""
    [(op, av)] = body
    code = ord(char)
    if op is sre.LITERAL:
        return code == av
    if op is sre.NOT_LITERAL:
        return code != av
    assert op is sre.IN, op
    negate, hit = False, False
    for item, value in av:
        if item is sre.NEGATE:
            negate = True
        elif item is sre.LITERAL:
            hit = hit or code == value
        elif item is sre.RANGE:
            hit = hit or value[0] <= code <= value[1]
        else:
            raise AssertionError(f"unexpected class member {item} in a canonical pattern")
    return hit != negate


def repeated_characters(canonical: str) -> list[str]:
    """For each repeat or optional part of the pattern, in order, a character it accepts."""
    found = []
    for op, av in walk(sre_parse.parse(canonical, re.ASCII).data):
        if op in REPEATS and len(av[2]) == 1 and av[2][0][0] in SINGLE_CHARACTER_OPS:
            accepted = [char for char in CANDIDATE_CHARS if _accepts(list(av[2]), char)]
            if accepted:
                found.append(accepted[len(accepted) // 2])
    return found


def hostile_lines(compiled: CompiledPattern) -> list[str]:
    """Lines a backtracking engine works hardest on for this pattern: long runs of what its
    repeats accept, alone or after its literal core, once or over and over, and all its
    repeats' characters in turn (the pumped string of polynomial backtracking), each cut
    to a log line's cap and ended by a character it does not expect."""
    runs = list(dict.fromkeys(repeated_characters(compiled.canonical)))
    literal = compiled.literals[0]
    lines = []
    for char in runs:
        lines += [literal + char * LINE_CAP, (literal + char * 8) * LINE_CAP, char * LINE_CAP]
    if len(runs) > 1:
        share = LINE_CAP // len(runs)
        lines.append(literal + "".join(char * share for char in runs))
    return [line[: LINE_CAP - 1] + "\x00" for line in lines]


# A line costs at most a few times a line's length squared in steps (each start position
# of a search may read the line to its end): under a second. A pattern that backtracks
# cubically or exponentially takes minutes to years.
CPU_SECONDS_PER_LINE = 5


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(source=elastic_patterns())
@example(source=".*.{0,200}FooError: ")
@example(source="FooError: [a-z]*[a-z]{0,999}")
@example(source="FooError: " + "(?:ab)?" * 30 + "c")
@example(source="FooError: " + "x?" * 30 + "x" * 30)
def test_accepted_patterns_run_on_hostile_lines_within_a_bound(source):
    """Whatever the dialect accepts, its canonical form and the exact check of ``failpedia
    diagnose`` search the hardest lines for it, capped as logs are, in bounded time."""
    try:
        compiled = compile_pattern(source)
    except PatternError:
        return
    exact = ExactPattern(compiled.canonical)
    for line in hostile_lines(compiled):
        with cpu_time_limit(CPU_SECONDS_PER_LINE):
            found = compiled.search(line)
            assert exact.search(line) == (found.span() if found else None)
