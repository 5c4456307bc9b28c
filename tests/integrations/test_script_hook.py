"""``import failpedia.hook``: a script that dies of a catalogued error gets the entry under
its traceback, and nothing else changes (the traceback byte for byte, the exit status);
``KeyboardInterrupt`` and ``SystemExit`` pass untouched; a broken index costs one line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hook_helpers import MATMUL, entry_url_and_summary

# Each loads the index (the checkout's entries, compiled) and most import torch.
slow = pytest.mark.slow
NONLEAF_GRAD = "autograd-nonleaf-grad-access"
# A head sized for 4 features fed 3: torch's own error, which MATMUL's signature matches.
SHAPE_MISMATCH = """
import torch
layer = torch.nn.Linear(4, 2)
layer(torch.ones(8, 3))
"""


def run_script(
    tmp_path: Path, body: str, hooked: bool, *args: str
) -> subprocess.CompletedProcess[str]:
    """Run ``body`` as a script, after ``import failpedia.hook`` or, for the run to compare
    with, ``import failpedia``: one line either way, so the tracebacks' line numbers agree."""
    first = "import failpedia.hook" if hooked else "import failpedia"
    script = tmp_path / "script.py"  # one name, as the tracebacks show it
    script.write_text(first + "\n" + textwrap.dedent(body).lstrip(), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )


def collapse(text: str) -> str:
    return " ".join(text.split())


@slow
def test_the_traceback_and_exit_status_stay_and_the_entry_follows(tmp_path: Path) -> None:
    plain = run_script(tmp_path, SHAPE_MISMATCH, hooked=False)
    hooked = run_script(tmp_path, SHAPE_MISMATCH, hooked=True)
    assert plain.returncode == hooked.returncode == 1
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x3 and 4x2)" in plain.stderr
    assert hooked.stdout == plain.stdout == ""
    # Python's own traceback, byte for byte, then the finding after a blank line.
    assert hooked.stderr.startswith(plain.stderr), hooked.stderr
    added = hooked.stderr[len(plain.stderr) :]
    report = added[added.index("\nfailpedia: ") :]
    assert report.startswith("\nfailpedia: 1 known failure in this exception;"), added
    url, summary = entry_url_and_summary(MATMUL)
    assert f"{MATMUL} (initiates the failure): {url}" in report
    assert summary in collapse(report)
    assert "> " in report and "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x2)" in report


@slow
def test_warnings_shown_before_the_exception_are_matched_with_it(tmp_path: Path) -> None:
    # torch warns when a non-leaf tensor's .grad is read; the script then dies of an error
    # no entry knows: the warning's entry is the finding.
    body = """
    import torch
    weight = torch.ones(2, requires_grad=True)
    scaled = weight * 2
    scaled.sum().backward()
    print(scaled.grad)
    raise LookupError("no such run")
    """
    hooked = run_script(tmp_path, body, hooked=True)
    assert hooked.returncode == 1
    assert "UserWarning: The .grad attribute of a Tensor that is not a leaf" in hooked.stderr
    report = hooked.stderr[hooked.stderr.index("LookupError: no such run") :]
    assert "in this exception and the warnings before it" in report
    assert f"{NONLEAF_GRAD} (" in report
    assert "first at warnings:1" in report


@slow
def test_an_exception_that_ends_a_thread_gets_its_entry(tmp_path: Path) -> None:
    body = """
    import threading
    import torch
    def step():
        torch.nn.Linear(4, 2)(torch.ones(8, 3))
    worker = threading.Thread(target=step)
    worker.start()
    worker.join()
    print("main goes on")
    """
    plain = run_script(tmp_path, body, hooked=False)
    hooked = run_script(tmp_path, body, hooked=True)
    assert plain.returncode == hooked.returncode == 0
    assert hooked.stdout == plain.stdout == "main goes on\n"
    assert hooked.stderr.startswith(plain.stderr)
    assert plain.stderr.startswith("Exception in thread")
    assert f"{MATMUL} (initiates the failure)" in hooked.stderr[len(plain.stderr) :]


def test_keyboard_interrupt_and_system_exit_pass_untouched(tmp_path: Path) -> None:
    for body in ("raise KeyboardInterrupt\n", "import sys\nsys.exit(3)\n"):
        plain = run_script(tmp_path, body, hooked=False)
        hooked = run_script(tmp_path, body, hooked=True)
        assert (hooked.returncode, hooked.stdout, hooked.stderr) == (
            plain.returncode,
            plain.stdout,
            plain.stderr,
        )
        assert plain.returncode != 0


@slow
def test_an_unknown_exception_gets_nothing_added(tmp_path: Path) -> None:
    body = 'raise LookupError("no such run")\n'
    plain = run_script(tmp_path, body, hooked=False)
    hooked = run_script(tmp_path, body, hooked=True)
    assert hooked.returncode == 1
    # Only what compiling the checkout's entries may warn (a draft left out) follows.
    added = hooked.stderr[len(plain.stderr) :]
    assert hooked.stderr.startswith(plain.stderr)
    assert "failpedia:" not in added


def test_a_broken_index_prints_one_line_and_steps_aside(tmp_path: Path) -> None:
    broken = tmp_path / "signatures.json"
    broken.write_text('{"format": 1, "entries": [', encoding="utf-8")
    # Two exceptions: a thread's, then the script's. The index is tried once.
    body = f"""
    import threading
    import failpedia.hook as hook
    hook.install(index={str(broken)!r})
    def step():
        raise ValueError("first")
    worker = threading.Thread(target=step)
    worker.start()
    worker.join()
    raise ValueError("second")
    """
    hooked = run_script(tmp_path, body, hooked=True)
    assert hooked.returncode == 1
    lines = hooked.stderr.splitlines()
    said = [line for line in lines if "failpedia" in line]
    assert len(said) == 1, hooked.stderr
    assert said[0].startswith(f"failpedia: no diagnosis ({broken}: cannot read the signature index")
    assert lines[-1] == "ValueError: second"


def test_importing_the_hook_loads_no_matcher(tmp_path: Path) -> None:
    """The index and the matcher load when an exception is diagnosed, never before."""
    body = """
    import sys
    loaded = sorted(name for name in sys.modules if name.startswith("failpedia"))
    print(loaded)
    print(any(name in sys.modules for name in ("IPython", "torch", "yaml", "json")))
    """
    hooked = run_script(tmp_path, body, hooked=True)
    assert hooked.returncode == 0, hooked.stderr
    assert hooked.stdout.splitlines() == [
        str(
            [
                "failpedia",
                "failpedia.hook",
                "failpedia.integrations",
                "failpedia.integrations.excepthook",
            ]
        ),
        "False",
    ]
