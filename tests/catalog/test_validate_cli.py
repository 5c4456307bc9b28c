"""``failpedia validate`` as a subprocess: each kind of problem, reported exactly.

Each test copies the mini fixture, breaks one thing, and checks the exact
``path:line: field.path: message`` lines; ``helpers.validate`` also checks exit code 1,
no traceback, and the closing count line.
"""

from __future__ import annotations

import re
import shutil

import pytest
from failpedia.catalog.model import Entry, Signature
from failpedia.catalog.model_fields import model_fields
from failpedia.signatures.line_rules import LINE_CAP
from helpers import (
    JAM,
    LIMIT,
    REPO_ROOT,
    REPORT_LINE,
    TIMEOUT,
    copy_fixture,
    display,
    entry_file,
    line_of,
    problem_lines,
    read_entry,
    replace_in_entry,
    replace_line,
    run_cli,
    validate,
    write_entry,
)

LIMIT_FILE = display(LIMIT)
JAM_FILE = display(JAM)
TIMEOUT_FILE = display(TIMEOUT)
LIMIT_PATTERN = r"'FooError: widget count \d+ exceeds limit \d+'"


def description(cls: type, name: str) -> str:
    return next(info.metadata["description"] for info in model_fields(cls) if info.name == name)


def allowed(cls: type) -> str:
    return ", ".join(info.name for info in model_fields(cls))


@pytest.fixture
def root(tmp_path):
    return copy_fixture(tmp_path)


def test_valid_fixture_passes(root):
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == "3 entries in 2 categories: no problems.\n"


# --- YAML syntax, encoding, binary ------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "title: Widget count exceeds the limit",
            "title: Widget count: exceeds the limit",
            "YAML syntax error: mapping values are not allowed in this context",
        ),
        (
            "  - Print the widget count before building.",
            "  - Print the widget count before building.\n  sizes: 3",
            "YAML syntax error: while parsing a block collection did not find expected '-' "
            "indicator",
        ),
        (
            "mechanism: The factory",
            "mechanism: @The factory",
            "YAML syntax error: while scanning for the next token found character that "
            "cannot start any token",
        ),
        (
            "  device: cpu",
            "  device: cpu\n\ttimeout: 3",
            "YAML syntax error: while scanning a plain scalar found a tab character that "
            "violates indentation",
        ),
    ],
    ids=["colon-in-plain-text", "bad-indentation", "reserved-character", "tab-indent"],
)
def test_yaml_syntax_error_names_its_line(root, old, new, message):
    text = replace_in_entry(root, LIMIT, old, new)
    # The error is on the last line of the replacement.
    bad_line = line_of(text, new.splitlines()[-1])
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:{bad_line}: {message}"]


def test_yaml_anchors_are_refused(root):
    text = replace_in_entry(
        root, LIMIT, "affects:\n  - The widget factory", "affects: &a [x]\ntags: *a"
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'tags: *a')}: "
        "YAML anchors and aliases are not supported in entries"
    ]


def test_binary_file(root):
    entry_file(root, LIMIT).write_bytes(b"id: widget-limit\n\x00\x01\x02\n")
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}: file is binary, not YAML text"]


def test_non_utf8_file_names_the_line(root):
    text = read_entry(root, LIMIT).replace(
        "title: Widget count exceeds the limit", "title: Widget caf\udce9 limit"
    )
    entry_file(root, LIMIT).write_bytes(text.encode("utf-8", "surrogateescape"))
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:3: file is not valid UTF-8"]


def test_non_utf8_latin1_file(root):
    text = read_entry(root, JAM).replace("a jammed slot.", "a jammed slot \u00e0 la carte.")
    entry_file(root, JAM).write_bytes(text.encode("latin-1"))
    bad_line = line_of(text, "\u00e0 la carte")
    _, lines = validate(root)
    assert lines == [f"{JAM_FILE}:{bad_line}: file is not valid UTF-8"]


# --- fields: unknown, wrong type, missing, given twice ----------------------------------


def test_unknown_top_level_field_suggests_the_near_one(root):
    text = replace_in_entry(root, LIMIT, "affects:\n", "summery: extra words\naffects:\n")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'summery:')}: summery: unknown field "
        f"(did you mean 'summary'?); allowed: {allowed(Entry)}"
    ]


def test_unknown_nested_field_has_its_full_path(root):
    text = replace_in_entry(
        root, LIMIT, "    emitted_by: every release", "    emitted_by: every release\n    patern: x"
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'patern:')}: signatures[0].patern: unknown field "
        f"(did you mean 'pattern'?); allowed: {allowed(Signature)}"
    ]


def test_unknown_field_without_a_near_name(root):
    text = replace_in_entry(root, LIMIT, "affects:\n", "zzzzzz: 1\naffects:\n")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'zzzzzz')}: zzzzzz: unknown field; allowed: {allowed(Entry)}"
    ]


@pytest.mark.parametrize(
    ("prefix", "new", "field", "message"),
    [
        ("title:", "title: [Widget, count]", "title", "expected text, got a list"),
        ("summary:", "summary: 42", "summary", "expected text, got a number (put it in quotes)"),
        ("title:", "title: 2.5", "title", "expected text, got a number (put it in quotes)"),
        ("title:", "title: yes", "title", "expected text, got true/false (put it in quotes)"),
        ("mechanism:", "mechanism: {a: 1}", "mechanism", "expected text, got a mapping"),
        (
            "affects:",
            "affects: The widget factory\nxaffects:",
            "affects",
            "expected a list, got text",
        ),
        ("  timeout:", "  timeout: thirty", "reproducer.timeout", "expected an integer, got text"),
        ("  timeout:", "  timeout: 0", "reproducer.timeout", "must be between 1 and 3600, not 0"),
        (
            "  timeout:",
            "  timeout: true",
            "reproducer.timeout",
            "expected an integer, got true/false",
        ),
        (
            "  device:",
            "  network: maybe\n  device: cpu",
            "reproducer.network",
            "expected true or false, got text",
        ),
        (
            "  device:",
            "  network: 1\n  device: cpu",
            "reproducer.network",
            "expected true or false, got a number",
        ),
        (
            "kind:",
            "kind: explosion",
            "kind",
            "must be one of 'crash', 'warning', 'hang', 'silent-wrong-result', not 'explosion'",
        ),
        ("  - Print", "  - - Print the widget count", "confirm[0]", "expected text, got a list"),
        ("  - text: Build", "  - Build", "fix[0]", "expected a mapping of fields, got text"),
        ("title:", "title:", "title", "is empty; expected text"),
        ("title:", "title: '  '", "title", "must not be empty"),
        (
            "id:",
            "id: Widget_Limit",
            "id",
            "'Widget_Limit' does not match the required format ^[a-z0-9]+(-[a-z0-9]+)*$",
        ),
        ("title:", "title: " + "w" * 121, "title", "is 121 characters long; the limit is 120"),
    ],
    ids=[
        "list-for-text",
        "int-for-text",
        "float-for-text",
        "bool-for-text",
        "mapping-for-text",
        "text-for-list",
        "text-for-int",
        "int-out-of-range",
        "bool-for-int",
        "text-for-bool",
        "int-for-bool",
        "not-a-choice",
        "list-in-list",
        "text-for-mapping",
        "empty",
        "blank",
        "bad-format",
        "too-long",
    ],
)
def test_wrong_type_or_value(root, prefix, new, field, message):
    text = replace_line(root, LIMIT, prefix, new)
    if "\nxaffects:" in new:
        # Drop the list items that followed `affects:`.
        text = replace_in_entry(root, LIMIT, "xaffects:\n  - The widget factory\n", "")
    if new == "  - Build":
        text = replace_in_entry(root, LIMIT, "    code: built = build(widgets[:limit])\n", "")
    bad_line = line_of(text, new.splitlines()[0])
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:{bad_line}: {field}: {message}"]


def test_missing_required_section(root):
    replace_in_entry(
        root,
        LIMIT,
        "mechanism: The factory counts widgets before building and raises above `limit`.\n",
        "",
    )
    _, lines = validate(root)
    # The file's top-level mapping starts on line 2, after the schema comment.
    assert lines == [
        f"{LIMIT_FILE}:2: mechanism: missing required field: {description(Entry, 'mechanism')}"
    ]


def test_missing_required_nested_field(root):
    text = replace_in_entry(root, LIMIT, "    verified_from: reproducer-output\n", "")
    item_line = line_of(text, '- text: "FooError')
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{item_line}: signatures[0].verified_from: missing required "
        f"field: {description(Signature, 'verified_from')}"
    ]


def test_empty_required_list(root):
    text = replace_in_entry(
        root, LIMIT, "confirm:\n  - Print the widget count before building.", "confirm: []"
    )
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:{line_of(text, 'confirm: []')}: confirm: needs at least 1 item"]


def test_field_given_twice(root):
    text = replace_in_entry(root, LIMIT, "kind: crash\n", "kind: crash\nkind: hang\n")
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:{line_of(text, 'kind: hang')}: kind: field is given twice"]


def test_document_that_is_not_a_mapping(root):
    write_entry(root, LIMIT, "# a comment\n- just\n- a list\n")
    _, lines = validate(root)
    assert lines == [f"{LIMIT_FILE}:2: expected a mapping of fields, got a list"]


def test_empty_file_message_is_plain_language(root):
    write_entry(root, LIMIT, "")
    _, lines = validate(root)
    assert len(lines) == 1
    assert lines[0].startswith(f"{LIMIT_FILE}:1: ")
    assert "NoneType" not in lines[0]


# --- ids, categories, links -------------------------------------------------------------


def test_id_must_equal_folder(root):
    replace_in_entry(root, LIMIT, "id: widget-limit", "id: widget-limits")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:2: id: 'widget-limits' must equal the folder name 'widget-limit'"
    ]


def copy_limit_into_gadgets(root):
    """A second ``widget-limit`` folder, in the gadgets category, otherwise valid."""
    shutil.copytree(root / "entries" / LIMIT, root / "entries" / "gadgets" / "widget-limit")
    entry = "gadgets/widget-limit"
    replace_in_entry(root, entry, "category: widgets", "category: gadgets")
    replace_in_entry(root, entry, '"FooError: widget count 3', '"FooError: widget count 30')
    replace_in_entry(root, entry, "exceeds limit \\d+'", "exceeds limit \\d+ *'")


def test_duplicate_id_in_two_categories(root):
    copy_limit_into_gadgets(root)
    _, lines = validate(root)
    assert len(lines) == 1
    assert re.fullmatch(
        re.escape(LIMIT_FILE)
        + r":\d+: id: duplicate id 'widget-limit': also used by "
        + re.escape(display("gadgets/widget-limit")),
        lines[0],
    ), lines


def test_duplicate_id_names_the_id_line(root):
    copy_limit_into_gadgets(root)
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:2: id: duplicate id 'widget-limit': also used by "
        f"{display('gadgets/widget-limit')}"
    ]


def test_unknown_category(root):
    entry = "sprockets/widget-jam"
    (root / "entries" / "sprockets").mkdir()
    (root / "entries" / JAM).rename(root / "entries" / entry)
    replace_in_entry(root, entry, "category: widgets", "category: sprockets")
    _, lines = validate(root)
    assert lines == [
        f"{display(entry)}:4: category: unknown category 'sprockets'; known: gadgets, widgets"
    ]


def test_category_must_equal_its_folder(root):
    replace_in_entry(root, LIMIT, "category: widgets", "category: gadgets")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:4: category: 'gadgets' must equal the category folder 'widgets'"
    ]


def test_related_link_to_missing_entry(root):
    text = replace_in_entry(root, JAM, "  - id: widget-limit", "  - id: widget-limitt")
    _, lines = validate(root)
    assert lines == [
        f"{JAM_FILE}:{line_of(text, '- id: widget-limitt')}: related[0].id: no entry with id "
        "'widget-limitt' (did you mean 'widget-limit'?)"
    ]


def test_related_link_to_itself(root):
    text = replace_in_entry(root, JAM, "  - id: widget-limit", "  - id: widget-jam")
    _, lines = validate(root)
    assert lines == [
        f"{JAM_FILE}:{line_of(text, '- id: widget-jam')}: related[0].id: "
        "an entry cannot be related to itself"
    ]


def test_related_links_must_agree_both_ways(root):
    text = replace_in_entry(
        root,
        LIMIT,
        "reproducer:",
        "related:\n  - id: widget-jam\n    relation: see-also\nreproducer:",
    )
    _, lines = validate(root)
    jam_line = line_of(read_entry(root, JAM), "- id: widget-limit")
    assert lines == [
        f"{JAM_FILE}:{jam_line}: related[0].id: says 'caused-by' but widget-limit says "
        "'see-also' back; expected 'causes'",
        f"{LIMIT_FILE}:{line_of(text, '- id: widget-jam')}: related[0].id: says 'see-also' but "
        "widget-jam says 'caused-by' back; expected 'see-also'",
    ]


def test_missing_reproducer_script(root):
    (root / "entries" / LIMIT / "repro.py").unlink()
    reproducer_line = line_of(read_entry(root, LIMIT), "reproducer:")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{reproducer_line}: reproducer.script: repro.py not found in the entry folder"
    ]


# --- signature patterns -----------------------------------------------------------------


def test_pattern_must_match_its_own_text(root):
    text = replace_in_entry(
        root, LIMIT, '"FooError: widget count 3', '"FooError: widget count three'
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: does not match "
        "any line of its own signature text"
    ]


GROUP_REPEAT = (
    "only '?' may follow a group: repeating a group can backtrack catastrophically; repeat "
    "a character or class instead, e.g. '[\\d, ]+'"
)


@pytest.mark.parametrize(
    ("pattern", "marker", "message"),
    [
        (r"FooError: (widget) count \d+ \1", "\\1", "backreferences are not allowed"),
        (
            r"FooError: widget count (?=\d)",
            "(?=",
            "lookaround is not allowed; use '(...)' or '(?:...)'",
        ),
        (
            r"FooError: widget count (?!x)\d",
            "(?!",
            "lookaround is not allowed; use '(...)' or '(?:...)'",
        ),
        (
            r"(?<=x)FooError: widget count",
            "(?<=",
            "lookaround is not allowed; use '(...)' or '(?:...)'",
        ),
        (r"FooError: widget (a+)+", ")+", GROUP_REPEAT),
        (r"FooError: widget (\d+ )*", ")*", GROUP_REPEAT),
        (
            r"FooError: widget count (?P<count>\d+)",
            "(?P",
            "named groups are not allowed; use '(...)' or '(?:...)'",
        ),
        (
            r"FooError: widget count (?<count>\d+)",
            "(?<c",
            "named groups are not allowed; use '(...)' or '(?:...)'",
        ),
        (
            r"(?i)FooError: widget count",
            "(?i",
            "inline flags and extensions are not allowed; use '(...)' or '(?:...)'",
        ),
        (
            r"FooError: widget \A",
            "\\A",
            "'\\A' is not in the portable dialect (its meaning "
            "differs between Python and JavaScript or it is not a regex escape)",
        ),
        (r"FooError: widget ** count", "**", "a quantifier cannot follow another quantifier"),
    ],
    ids=[
        "backreference",
        "lookahead",
        "negative-lookahead",
        "lookbehind",
        "nested-quantifier",
        "repeated-group",
        "named-group",
        "js-named-group",
        "inline-flag",
        "escape",
        "double-star",
    ],
)
def test_pattern_outside_the_dialect(root, pattern, marker, message):
    text = replace_in_entry(root, LIMIT, LIMIT_PATTERN, f"'{pattern}'")
    column = pattern.index(marker) + 1
    if marker in (")+", ")*"):
        column += 1  # the repeat after the group
    if marker == "**":
        column += 1  # the second star
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: "
        f"column {column}: {message}"
    ]


@pytest.mark.parametrize(
    ("pattern", "longest"),
    [
        (r"\w+: \d+", ": "),
        (r"FooError: widget|\d+", ""),
        (r"Foo(Error: widget count)", "Foo"),
        (r"F?ooErr\d+", "ooErr"),
        (r"FooE(?:rror)?: wid", ": wid"),
    ],
    ids=["classes-only", "bare-alternative", "literal-in-group", "optional-part", "split-core"],
)
def test_pattern_without_literal_core(root, pattern, longest):
    text = replace_in_entry(root, LIMIT, LIMIT_PATTERN, f"'{pattern}'")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: needs a fixed "
        "literal of at least 6 characters outside groups and repeats "
        f"in every alternative (longest found: {longest!r}), so that it cannot match "
        "unrelated lines"
    ]


def test_equivalent_patterns_in_two_entries(root):
    """``\\d`` and ``[0-9]`` have one canonical form: the same pattern twice."""
    replace_in_entry(
        root,
        JAM,
        '"BarError: widget 7 jammed in slot 4"',
        '"FooError: widget count 5 exceeds limit 4"',
    )
    replace_in_entry(
        root,
        JAM,
        r"'BarError: widget \d+ jammed in slot \d+'",
        r"'FooError: widget count [0-9]+ exceeds limit [0-9]+'",
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:10: signatures[0].pattern: the same signature pattern is already in "
        "entry 'widget-jam'"
    ]


def test_same_signature_text_in_two_entries(root):
    replace_in_entry(
        root,
        JAM,
        '"BarError: widget 7 jammed in slot 4"',
        '"FooError: widget count 3 exceeds limit 2"',
    )
    replace_in_entry(
        root,
        JAM,
        r"'BarError: widget \d+ jammed in slot \d+'",
        r"'FooError: widget count \d+ exceeds'",
    )
    _, lines = validate(root)
    # Entries load in path order, so widget-jam claims the text first.
    assert lines == [
        f"{LIMIT_FILE}:9: signatures[0].text: the same signature text is already in entry "
        "'widget-jam'"
    ]


# --- Markdown fields --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "tag"),
    [
        (
            "summary: The factory refuses",
            "summary: Use <b>fewer</b> widgets. The factory refuses",
            "summary",
            "<b>fewer</b> widgets",
        ),
        (
            "  - Print the widget count",
            "  - Print <br/> the widget count",
            "confirm[0]",
            "<br/> the widget cou",
        ),
        (
            "  - text: Build at most",
            "  - text: <!-- note --> Build at most",
            "fix[0].text",
            "<!-- note --> Build ",
        ),
        (
            "mechanism: The factory",
            "mechanism: The <div\n  class=x> factory",
            "mechanism",
            "<div class=x> factor",
        ),
    ],
    ids=["summary", "list-item", "comment", "tag-across-lines"],
)
def test_raw_html_in_markdown_field(root, old, new, field, tag):
    text = replace_in_entry(root, LIMIT, old, new)
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, new.splitlines()[0])}: {field}: raw HTML is not allowed "
        f"({tag!r}); use Markdown, or put code in backticks"
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "summary: The factory refuses",
            "summary: Set `<b>` and ``a <i> b`` then. The factory refuses",
        ),
        (
            "mechanism: The factory counts widgets before building and raises above `limit`.",
            "mechanism: |-\n  The factory raises:\n\n  ```html\n  <div>limit</div>\n  ```\n\n"
            "  ~~~~\n  <span>\n  ~~~~\n\n  Then it stops.",
        ),
        (
            "    code: built = build(widgets[:limit])",
            "    code: built = build(widgets[:limit])\n  - text: Or render it.\n"
            "    code: html = '<b>verbatim</b>'",
        ),
        ("summary: The factory refuses", "summary: The factory refuses when x < 3 or a<=b, more"),
        ("summary: The factory refuses", "summary: See <https://example.com>. The factory refuses"),
    ],
    ids=["code-spans", "code-fences", "verbatim-field", "less-than", "autolink"],
)
def test_html_in_code_is_not_flagged(root, old, new):
    replace_in_entry(root, LIMIT, old, new)
    result = run_cli(root, "validate")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


# --- placeholders -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "cls", "name"),
    [
        ("title: Widget count exceeds the limit", "title: TODO", "title", Entry, "title"),
        ("kind: crash", "kind: TODO", "kind", Entry, "kind"),
        ("  - The widget factory", "  - TODO", "affects[0]", Entry, "affects"),
        (
            "    emitted_by: every release",
            "    emitted_by: '  TODO '",
            "signatures[0].emitted_by",
            Signature,
            "emitted_by",
        ),
    ],
    ids=["text", "choice", "list-item", "padded"],
)
def test_leftover_todo_placeholder(root, old, new, field, cls, name):
    text = replace_in_entry(root, LIMIT, old, new)
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, new.strip())}: {field}: still the placeholder TODO: "
        f"{description(cls, name)}"
    ]


# --- many problems, one run -------------------------------------------------------------


def test_all_problems_in_all_files_are_reported_in_one_run(root):
    limit = replace_in_entry(root, LIMIT, "title: Widget count exceeds the limit", "title: [a, b]")
    limit = replace_in_entry(root, LIMIT, "affects:\n", "summery: x\naffects:\n")
    jam = replace_in_entry(root, JAM, "kind: hang", "kind: TODO")
    jam = replace_in_entry(root, JAM, "  - id: widget-limit", "  - id: widget-limitt")
    timeout = replace_in_entry(root, TIMEOUT, "tags: [gadgets, timeout]", "tags: [gadgets, timeout")
    (root / "entries" / "categories.yaml").write_text(
        (root / "entries" / "categories.yaml").read_text(encoding="utf-8")
        + "  - id: widgets\n    title: Again\n    description: A second widgets.\n",
        encoding="utf-8",
    )
    _, lines = validate(root)
    assert lines == [
        "entries/categories.yaml:8: categories[2].id: duplicate id 'widgets'",
        f"{TIMEOUT_FILE}:{line_of(timeout, 'mechanism:')}: YAML syntax error: while parsing a "
        "flow sequence did not find expected ',' or ']'",
        f"{JAM_FILE}:{line_of(jam, 'kind:')}: kind: still the placeholder TODO: "
        f"{description(Entry, 'kind')}",
        f"{LIMIT_FILE}:{line_of(limit, 'title:')}: title: expected text, got a list",
        f"{LIMIT_FILE}:{line_of(limit, 'summery:')}: summery: unknown field "
        f"(did you mean 'summary'?); allowed: {allowed(Entry)}",
    ]
    # widget-jam's broken link is not checked: the entry failed before links are resolved.


# --- bugs found: each of these fails today ------------------------------------------------


@pytest.mark.parametrize("tagged", ["!!int abc", "!!float abc", "!!bool maybe", "!!timestamp x"])
def test_explicit_tag_with_bad_value_is_a_problem_not_a_traceback(root, tagged):
    replace_in_entry(root, LIMIT, "title: Widget count exceeds the limit", f"title: {tagged}")
    _, lines = validate(root)
    assert len(lines) == 1
    assert lines[0].startswith(f"{LIMIT_FILE}:3: ")


def test_deeply_nested_yaml_is_a_problem_not_a_crash(root):
    write_entry(root, LIMIT, "[" * 900_000)
    _, lines = validate(root)
    assert len(lines) == 1
    assert lines[0].startswith(f"{LIMIT_FILE}:")


def test_key_with_line_break_stays_on_one_report_line(root):
    text = replace_in_entry(root, LIMIT, "affects:\n", '"summ\\nary": x\naffects:\n')
    _, lines = validate(root)
    assert len(lines) == 1
    key_line = line_of(text, '"summ')
    assert lines[0].startswith(f"{LIMIT_FILE}:{key_line}: ")
    assert all(re.match(REPORT_LINE, line) for line in lines)


def test_control_character_is_reported_on_its_line(root):
    text = replace_in_entry(root, LIMIT, "kind: crash", "kind: cr\x1fash")
    _, lines = validate(root)
    assert len(lines) == 1
    assert lines[0].startswith(f"{LIMIT_FILE}:{line_of(text, 'kind:')}: ")
    assert "<unicode string>" not in lines[0]


def test_pattern_error_stays_on_one_report_line(root):
    replace_in_entry(root, LIMIT, LIMIT_PATTERN, '"FooError: widget count\\\\\\n"')
    _, lines = validate(root)
    assert len(lines) == 1
    assert lines[0].startswith(f"{LIMIT_FILE}:10: signatures[0].pattern: column 23: ")


def test_unclosed_quote_on_last_line_names_that_line(root):
    text = replace_line(root, LIMIT, "  timeout:", '  timeout: "30')
    assert text.endswith('"30\n')
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'timeout:')}: YAML syntax error: while scanning a quoted "
        "scalar found unexpected end of stream"
    ]


def test_backtick_heavy_markdown_validates_quickly(root):
    replace_line(root, LIMIT, "summary:", "summary: 'a " + "`" * 100_000 + "'")
    result = run_cli(root, "validate", timeout=3)
    assert result.returncode == 0, result.stderr


def test_polynomial_backtracking_pattern_is_refused_quickly(root):
    pattern = "\\d*" * 10 + "FooError: widget count \\d+ exceeds limit \\d+"
    replace_in_entry(root, LIMIT, LIMIT_PATTERN, f"'{pattern}'")
    replace_in_entry(root, LIMIT, '- text: "FooError', '- text: "' + "1" * 40 + "\\nFooError")
    result = run_cli(root, "validate", timeout=3)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert f"{LIMIT_FILE}:10: signatures[0].pattern: " in result.stderr


# Patterns that backtrack for hours on a line of their own signature text, through bounded
# repeats, optional characters and alternatives, each with the text that makes them try
# every way they have of matching it.
HOSTILE_PATTERNS = {
    "bounded-repeats": ("FooError: widget count " + ".{0,1000}" * 4 + "x", "a" * 1000),
    "bounded-beside-unbounded": (
        "FooError: widget count [a-z]*[a-z]{0,999}[a-z]{0,999}!",
        "a" * 4000,
    ),
    "optional-characters": ("FooError: widget count " + "a?" * 40 + "a" * 40 + "b", "a" * 70),
    "alternatives": ("FooError: widget count " + "(?:aa|a)" * 40 + "b", "a" * 60),
    "optional-groups": ("FooError: widget count " + "(?:ab)?" * 40 + "c", "ab" * 40),
}


@pytest.mark.parametrize(("pattern", "filler"), HOSTILE_PATTERNS.values(), ids=HOSTILE_PATTERNS)
def test_patterns_that_backtrack_through_bounded_parts_are_refused_quickly(root, pattern, filler):
    replace_in_entry(root, LIMIT, LIMIT_PATTERN, f"'{pattern}'")
    replace_in_entry(
        root,
        LIMIT,
        '"FooError: widget count 3 exceeds limit 2"',
        f'"FooError: widget count {filler}"',
    )
    result = run_cli(root, "validate", timeout=5)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stdout
    [line] = problem_lines(result.stderr)
    assert line.startswith(f"{LIMIT_FILE}:10: signatures[0].pattern: column "), line


def test_a_huge_signature_text_is_matched_as_a_log_line_is_capped(root):
    """Logs are matched on a line's first ``LINE_CAP`` characters; so is the signature's
    own text, which would otherwise take quadratic time on a megabyte of repeats."""
    replace_in_entry(root, LIMIT, LIMIT_PATTERN, "'FooError: widget count .*x'")
    text = replace_in_entry(
        root,
        LIMIT,
        '"FooError: widget count 3 exceeds limit 2"',
        '"' + "FooError: widget count " * 40_000 + '"',
    )
    result = run_cli(root, "validate", timeout=5)
    assert problem_lines(result.stderr) == [
        f"{LIMIT_FILE}:{line_of(text, 'pattern:')}: signatures[0].pattern: does not match "
        f"any line of its own signature text (within the first {LINE_CAP} characters of a "
        "line, as logs are matched)"
    ]


def test_the_catalog_passes_validation():
    """Every pattern of the real catalog stays within the dialect."""
    result = run_cli(REPO_ROOT, "validate")
    assert result.returncode == 0, result.stderr


def test_entry_must_reference_the_schema_on_its_first_line(root):
    replace_in_entry(root, LIMIT, "# yaml-language-server: $schema=../../entry.schema.json\n", "")
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:1: the first line must be "
        "`# yaml-language-server: $schema=../../entry.schema.json`, so that editors check the file"
    ]


def test_reproducer_must_mark_its_fix_region(root):
    script = root / "entries" / LIMIT / "repro.py"
    script.write_text(script.read_text().replace("# --- fix: end\n", ""))
    _, lines = validate(root)
    assert len(lines) == 1
    assert (
        ": reproducer.script: repro.py: expected one `# --- fix: start` followed by one "
        in (lines[0])
    )


def test_first_fix_code_must_be_the_proved_region(root):
    text = replace_in_entry(
        root, LIMIT, "    code: built = build(widgets[:limit])", "    code: built = build(widgets)"
    )
    _, lines = validate(root)
    assert lines == [
        f"{LIMIT_FILE}:{line_of(text, 'code: built = build(widgets)')}: fix[0].code: "
        "differs from the fix region of repro.py; the page shows the region (the code that "
        "was proved), so make them equal or leave it out"
    ]
