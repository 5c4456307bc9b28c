"""``failpedia new``: an entry folder whose only validation failures are the author's to fill."""

from __future__ import annotations

import re
from pathlib import Path

from failpedia.catalog.model import ID_PATTERN, SCHEMA_MODELINE
from failpedia.catalog.problems import ProblemList
from failpedia.catalog.retired import load_retired, reused_problem

ENTRY_TEMPLATE = """\
{modeline}
id: {entry_id}
title: TODO
category: {category}
kind: TODO  # crash, warning, hang or silent-wrong-result
role: TODO  # initiating, downstream (follows from another), wrapper (reports any it caught)
summary: TODO
signatures:
  - text: TODO  # the message exactly as emitted, copied from source or captured output
    pattern: TODO  # portable regex matching one line of text; see CONTRIBUTING.md
    verified_from: TODO  # framework-source or reproducer-output
    verified_at: TODO  # file and release, e.g. torch/nn/modules/module.py, torch 2.13.0
    emitted_by: TODO  # releases that print this wording, e.g. torch >= 2.7
    seen_in:  # the line as pasted in two public threads other than the one you started from
      - url: TODO
        line: TODO  # one line, exactly as the thread shows it; the pattern must match it
      - url: TODO
        line: TODO
affects:
  - TODO
mechanism: TODO
confirm:
  - TODO
fix:
  - text: TODO
{proof}"""

REPRODUCER_PART = """\
reproducer:
  device: TODO  # cpu, cuda or multi-gpu
"""

# For a failure no script can trigger on demand (CONTRIBUTING.md, "evidence").
EVIDENCE_PART = """\
evidence:
  unreproducible: TODO  # why no script can trigger it on demand
  reports:  # at least two public threads, each quoting the failure's line as pasted
    - url: TODO
      quote: TODO  # one line, exactly as the report shows it; a pattern must match it
      versions: TODO  # the versions the report names
    - url: TODO
      quote: TODO
      versions: TODO
"""

REPRO_TEMPLATE = '''\
"""Reproducer for {entry_id}.

`python repro.py` must print the failure's signature; `python repro.py --fixed` must not,
and must exit 0. Every difference between the two modes lies between the fix markers
(the entry's page shows that code); the check region asserts that the fixed program still
computes what it should, against a reference, and runs the same way in both modes.
"""

import sys

FIXED = "--fixed" in sys.argv[1:]

# TODO: build the small program that fails

if FIXED:
# --- fix: start
    pass  # TODO: the code that fixes the failure
# --- fix: end

# TODO: the work that fails without the fix

# --- check: start
# TODO: assert the result equals a reference, e.g. torch.testing.assert_close(out, expected)
# --- check: end

raise SystemExit("TODO: write the reproducer")
'''


def scaffold_entry(
    entries_dir: Path, target: str, known_categories: set[str], evidence: bool = False
) -> Path:
    """Create ``entries/<category>/<id>/`` with a skeleton entry and reproducer (or, with
    ``evidence``, a skeleton entry documented from public reports)."""
    parts = target.strip("/").split("/")
    if len(parts) != 2:
        raise ValueError(f"expected <category>/<id>, got {target!r}")
    category, entry_id = parts
    for label, value in (("category", category), ("id", entry_id)):
        if not re.fullmatch(ID_PATTERN, value):
            raise ValueError(
                f"{label} {value!r} must be lowercase words joined by hyphens, e.g. oom-on-backward"
            )
    if category not in known_categories:
        known = ", ".join(sorted(known_categories)) or "none"
        raise ValueError(
            f"unknown category {category!r} (known: {known}); add it to "
            "entries/categories.yaml first"
        )
    # A registry with problems of its own is reported by validate; here it refuses nothing.
    registry = load_retired(entries_dir, entries_dir.parent, ProblemList())
    taken = reused_problem(entry_id, registry)
    if taken is not None:
        raise ValueError(taken)
    folder = entries_dir / category / entry_id
    if folder.exists():
        raise ValueError(f"{folder} already exists")
    folder.mkdir(parents=True)
    proof = EVIDENCE_PART if evidence else REPRODUCER_PART
    (folder / "entry.yaml").write_text(
        ENTRY_TEMPLATE.format(
            entry_id=entry_id, category=category, modeline=SCHEMA_MODELINE, proof=proof
        ),
        encoding="utf-8",
    )
    if not evidence:
        (folder / "repro.py").write_text(REPRO_TEMPLATE.format(entry_id=entry_id), encoding="utf-8")
    return folder
