"""Property tests: the validator on arbitrary input.

(a) Any bytes, any text, any YAML written as an entry (or the category registry) give
    problems, never an exception, and every problem is a ``path:line: field: message``.
(b) Random mutations of a valid entry never raise, and the ones with a known outcome
    (a dropped field, an added unknown key) are reported at the right field path.

Known crashes are kept out of the generators (explicit ``!!`` tags, 30,000-deep nesting,
line breaks inside keys) and have dedicated tests in test_validate_cli.py.
"""

from __future__ import annotations

import contextlib
import copy
import re
import typing

import pytest
import yaml
from failpedia.catalog.model import Entry
from failpedia.catalog.model_fields import is_model, model_fields, unwrap_optional
from failpedia.catalog.problems import Problem
from failpedia.catalog.validate import load_catalog
from failpedia.catalog.yaml_source import format_field_path
from helpers import (
    ENTRIES,
    FIXTURE,
    LIMIT,
    REPORT_LINE,
    copy_fixture,
    display,
    entry_file,
    read_entry,
    run_cli,
    time_limit,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FAST = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# Characters YAML refuses to read. libyaml's "unacceptable character" error is reported on
# line 1 with a two-line message (see test_control_character_is_reported_on_its_line), so
# the one-line check below skips files holding one.
NON_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def has_non_printable(data: bytes) -> bool:
    try:
        return bool(NON_PRINTABLE.search(data.decode("utf-8")))
    except UnicodeDecodeError:
        return False


def without_non_printable(data: bytes) -> bytes:
    try:
        return NON_PRINTABLE.sub("", data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return data


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """One copy of the fixture per module; each example rewrites one file and restores it."""
    return copy_fixture(tmp_path_factory.mktemp("props"))


@contextlib.contextmanager
def written(path, data: bytes):
    original = path.read_bytes()
    path.write_bytes(data)
    try:
        yield
    finally:
        path.write_bytes(original)


YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def check_catalog(root, data: bytes | None = None, written_path: str = display(LIMIT)):
    """Load the catalog in-process; check it never raises and every problem is well formed."""
    with time_limit(20):
        catalog, problems = load_catalog(root / "entries", root)
    # Lines as YAML counts them: "\r" alone and the Unicode breaks end a line too.
    line_count = (
        len(YAML_BREAK.findall(data.decode("utf-8", "replace"))) + 1 if data is not None else None
    )
    one_line = data is not None and not has_non_printable(data)
    for problem in problems:
        assert isinstance(problem, Problem)
        assert isinstance(problem.path, str) and problem.path
        assert not problem.path.startswith("/"), problem  # relative to the project root
        assert isinstance(problem.line, int) and problem.line >= 0, problem
        assert isinstance(problem.field, str)
        assert isinstance(problem.message, str) and problem.message.strip(), problem
        assert re.match(REPORT_LINE, str(problem)), str(problem)
        if one_line:
            assert "\n" not in str(problem), str(problem)
        if line_count is not None and problem.path == written_path:
            # Never past the last line (see the end-of-stream test).
            assert problem.line <= line_count, (problem, line_count)
    if not problems:
        assert len(catalog.entries) == len(ENTRIES)
    return catalog, problems


# --- (a) arbitrary files ------------------------------------------------------------------

ENTRY_FIELDS = [info.name for info in model_fields(Entry)]
# Keys without line breaks or control characters (a key with a line break splits its report
# line: see test_key_with_line_break_stays_on_one_report_line).
KEY_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\x85"),
    min_size=1,
    max_size=10,
)
KEYS = st.one_of(st.sampled_from([*ENTRY_FIELDS, "text", "pattern", "device", "id"]), KEY_TEXT)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["TODO", "<b>x</b>", "`<b>`", "cpu", "crash", "widgets", "widget-limit"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=25,
)
YAML_DOCUMENTS = VALUES.map(
    lambda value: yaml.safe_dump(value, allow_unicode=True, sort_keys=False).encode("utf-8")
)

FIXTURE_TEXTS = {entry: read_entry(FIXTURE, entry) for entry in ENTRIES}

# Pieces that break YAML in interesting ways; no explicit `!!` tags (see the tag test).
TOKENS = [
    ":",
    ": ",
    "- ",
    "-",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\t",
    '"',
    "'",
    "&a ",
    "*a",
    "!foo ",
    "? ",
    "|",
    ">",
    "#",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "\n",
    "  ",
    "\x00",
    "\ufeff",
    "\u00e9",
    "<b>",
    "`",
    "TODO",
    "null",
    "~",
    "0x1F",
    "1e3",
    "yes",
    ".inf",
    "<<: ",
    "\\",
    "\r",
    "\x85",
    "\u2028",
    "@",
    "%",
    "\\x",
    "\\u12",
]


@st.composite
def malformed_entries(draw):
    """A fixture entry with a few random insertions, deletions and swapped lines."""
    text = draw(st.sampled_from([FIXTURE_TEXTS[entry] for entry in ENTRIES]))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        operation = draw(st.sampled_from(["insert", "delete", "indent", "swap"]))
        if operation == "insert":
            token = draw(st.sampled_from(TOKENS) | st.text(max_size=4))
            text = text[:position] + token + text[position:]
        elif operation == "delete":
            text = text[:position] + text[position + draw(st.integers(1, 12)) :]
        elif operation == "indent":
            start = text.rfind("\n", 0, position) + 1
            text = text[:start] + draw(st.sampled_from([" ", "  ", "\t", ""])) + text[start:]
        else:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text.encode("utf-8")


ANY_FILE = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda text: text.encode("utf-8")),
    YAML_DOCUMENTS,
    malformed_entries(),
)


@FAST
@given(data=ANY_FILE, target=st.sampled_from([LIMIT, "categories"]))
def test_any_file_gives_problems_not_exceptions(project, data, target):
    if target == "categories":
        path, shown = project / "entries" / "categories.yaml", "entries/categories.yaml"
    else:
        path, shown = entry_file(project, target), display(target)
    with written(path, data):
        check_catalog(project, data, shown)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.one_of(malformed_entries(), st.binary(max_size=200), YAML_DOCUMENTS).map(
        without_non_printable
    )
)
def test_cli_on_any_entry_exits_cleanly(project, data):
    """The same property through the real command, on a few examples."""
    with written(entry_file(project, LIMIT), data):
        result = run_cli(project, "validate")
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    if result.returncode == 0:
        assert result.stderr == ""
        return
    lines = result.stderr.split("\n")
    assert lines[-1] == ""
    assert re.fullmatch(r"\d+ problems? found\.", lines[-2]), lines[-2]
    for line in lines[:-2]:
        assert re.match(REPORT_LINE, line), line
    assert int(lines[-2].split()[0]) == len(lines) - 2


# --- (b) mutations of a valid entry -------------------------------------------------------

VALID = yaml.safe_load(FIXTURE_TEXTS[LIMIT])


def all_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from all_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from all_paths(item, (*path, index))


PATHS = list(all_paths(VALID))


def get(value, path):
    for part in path:
        value = value[part]
    return value


def model_at(path):
    """The model class of the mapping at ``path`` in an entry, or None."""
    tp = Entry
    for part in path:
        tp, _ = unwrap_optional(tp)
        if isinstance(part, int):
            if typing.get_origin(tp) is not list:
                return None
            (tp,) = typing.get_args(tp)
        else:
            if not is_model(tp):
                return None
            fields = {info.name: info.type for info in model_fields(tp)}
            if part not in fields:
                return None
            tp = fields[part]
    tp, _ = unwrap_optional(tp)
    return tp if is_model(tp) else None


MAPPING_PATHS = [path for path in PATHS if isinstance(get(VALID, path), dict)]
KEY_PATHS = [path for path in PATHS if path and isinstance(path[-1], str)]


def write_document(root, document):
    text = "# yaml-language-server: $schema=../../entry.schema.json\n" + yaml.safe_dump(
        document, allow_unicode=True, sort_keys=False
    )
    data = text.encode("utf-8")
    entry_file(root, LIMIT).write_bytes(data)
    return text, data


@FAST
@given(st.data())
def test_random_mutations_never_raise(project, data):
    document = copy.deepcopy(VALID)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        paths = list(all_paths(document))
        path = data.draw(st.sampled_from(paths), label="path")
        operation = data.draw(st.sampled_from(["drop", "replace", "add-key", "text"]))
        parent = get(document, path[:-1]) if path else None
        if operation == "drop" and path:
            del parent[path[-1]]
        elif operation == "replace" and path:
            parent[path[-1]] = data.draw(VALUES, label="value")
        elif operation == "add-key":
            target = get(document, path)
            if isinstance(target, dict):
                target[data.draw(KEY_TEXT, label="key")] = data.draw(SCALARS, label="value")
        elif operation == "text" and path:
            parent[path[-1]] = data.draw(st.text(max_size=30), label="text")
    original = entry_file(project, LIMIT).read_bytes()
    try:
        _, encoded = write_document(project, document)
        check_catalog(project, encoded)
    finally:
        entry_file(project, LIMIT).write_bytes(original)


@FAST
@given(path=st.sampled_from(KEY_PATHS))
def test_dropping_a_field_is_reported_exactly_when_required(project, path):
    document = copy.deepcopy(VALID)
    del get(document, path[:-1])[path[-1]]
    original = entry_file(project, LIMIT).read_bytes()
    try:
        _, encoded = write_document(project, document)
        _, problems = check_catalog(project, encoded)
    finally:
        entry_file(project, LIMIT).write_bytes(original)
    model = model_at(path[:-1])
    assert model is not None
    required = {info.name for info in model_fields(model) if info.required}
    if path == ("reproducer",):  # optional in the model: `evidence` may stand in for it
        assert [(problem.path, problem.field) for problem in problems] == [
            (display(LIMIT), "reproducer")
        ], problems
        assert problems[0].message.startswith("missing: every entry has a reproducer")
    elif path[-1] == "seen_in_note":  # optional in the model: needed with fewer sightings
        assert [(problem.path, problem.field) for problem in problems] == [
            (display(LIMIT), format_field_path(path[:-1]))
        ], problems
        assert problems[0].message.startswith("0 public thread(s) show this signature")
    elif path[-1] in required:
        assert [(problem.path, problem.field) for problem in problems] == [
            (display(LIMIT), format_field_path(path))
        ], problems
        assert problems[0].message.startswith("missing required field: ")
    else:
        assert list(problems) == []


@FAST
@given(path=st.sampled_from(MAPPING_PATHS), key=KEY_TEXT)
def test_an_added_unknown_key_is_reported_at_its_line(project, path, key):
    model = model_at(path)
    assert model is not None
    names = {info.name for info in model_fields(model)}
    document = copy.deepcopy(VALID)
    key = "zz" + key
    get(document, path)[key] = "extra"
    original = entry_file(project, LIMIT).read_bytes()
    try:
        text, encoded = write_document(project, document)
        _, problems = check_catalog(project, encoded)
        reparsed = yaml.safe_load(text)
    finally:
        entry_file(project, LIMIT).write_bytes(original)
    assert key not in names
    assert get(reparsed, path)[key] == "extra"
    assert len(problems) == 1, problems
    (problem,) = problems
    assert problem.path == display(LIMIT)
    assert problem.field == format_field_path((*path, key))
    assert problem.message.startswith("unknown field")
    assert problem.message.endswith(
        "; allowed: " + ", ".join(info.name for info in model_fields(model))
    )
    # The reported line holds the key (safe_dump may quote it).
    reported = text.split("\n")[problem.line - 1]
    assert "extra" in reported, (problem, reported)
