"""``mkdocs build`` refuses exactly what ``failpedia validate`` refuses, the matching
engine's refusals included.

No pattern the dialect accepts is known to make Hyperscan refuse it, so the engine is
replaced, for the processes under test only, by a stand-in module that refuses any
pattern containing a marker word with Hyperscan's own kind of message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli
from sitebuild import copy_site_project

ENTRY = "entries/compile/dynamo-recompile-limit/entry.yaml"
MARKER = "Refusedbyengine"
REFUSING_HYPERSCAN = f'''
"""python-hyperscan, except that a database refuses patterns containing {MARKER!r}."""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_others = [path for path in sys.path if os.path.abspath(path or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("hyperscan", _others)
_real = importlib.util.module_from_spec(_spec)
_self = sys.modules[__name__]
sys.modules[__name__] = _real  # the real package's own imports find it under its name
try:
    _spec.loader.exec_module(_real)
finally:
    sys.modules[__name__] = _self
globals().update({{name: getattr(_real, name) for name in dir(_real) if not name.startswith("__")}})


class Database(_real.Database):
    def compile(self, *args, **kwargs):
        expressions = kwargs.get("expressions", args[0] if args else [])
        if any(b"{MARKER}" in expression for expression in expressions):
            raise _real.error("Pattern is too large.")
        return super().compile(*args, **kwargs)
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's site whose one entry has an engine-refused pattern."""
    project = copy_site_project(tmp_path / "project")
    entry = project / ENTRY
    lines = entry.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith("    pattern: "))
    line = lines[number].rstrip()
    assert line[-1] in "'\"", "the first pattern is quoted"
    # An optional group: the pattern still matches its own text.
    lines[number] = f"{line[:-1]}(?:{MARKER})?{line[-1]}"
    entry.write_text("\n".join(lines), encoding="utf-8")
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    (stand_in / "hyperscan.py").write_text(REFUSING_HYPERSCAN, encoding="utf-8")
    return project


def _environment(stand_in: Path, cache: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(stand_in), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "NO_MKDOCS_2_WARNING": "1",
        "XDG_CACHE_HOME": str(cache),
    }


@pytest.mark.slow
def test_build_and_validate_refuse_the_same_pattern(project: Path, tmp_path: Path) -> None:
    # One cache for every run: the forms the engine accepted are remembered there, and a
    # refusal must be found again by each run, never remembered as accepted.
    environment = _environment(tmp_path / "stand-in", tmp_path / "cache")
    problem = f"{ENTRY}:"
    refusal = (
        "signatures[0].pattern: the matching engine refuses this pattern: Pattern is too large."
    )

    for _ in range(2):
        validate = subprocess.run(
            [sys.executable, "-m", "failpedia.cli", "--root", str(project), "validate"],
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
            check=False,
        )
        assert validate.returncode == 1
        [line] = [line for line in validate.stderr.splitlines() if line.startswith(problem)]
        assert line.endswith(refusal), line
    assert list((tmp_path / "cache" / "failpedia").glob("accepted-*.txt"))

    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=False,
    )
    output = build.stdout + build.stderr
    assert build.returncode != 0
    assert line in output
    assert "Traceback" not in output
    assert not (site / "index.html").exists()


def test_without_the_stand_in_the_marked_pattern_is_accepted(project: Path) -> None:
    """The marker itself is an ordinary word: only the engine's refusal fails the check."""
    assert run_cli(project, "validate").returncode == 0
