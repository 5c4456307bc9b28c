"""``failpedia run -- CMD``: the command's output passes through unchanged, its exit status
comes back, signals reach its process group, and the diagnosis follows on stderr."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import resource
import select
import signal
import subprocess
import sys
import textwrap
import time
import tty
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from diagnose_helpers import corpus_logs, diagnose_json, essence
from sitebuild import REPO

CLI = [sys.executable, "-m", "failpedia.cli"]
CORPUS = REPO / "tests" / "diagnose_corpus"


def run(*args: str, timeout: float = 120, **options: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, "run", *args],
        capture_output=True,
        timeout=timeout,
        check=False,
        **options,  # type: ignore[arg-type]
    )


def python(script: str) -> list[str]:
    """A command running ``script`` in a fresh interpreter."""
    return [sys.executable, "-c", textwrap.dedent(script)]


def summary_words(entry: str) -> str:
    """The first words of an entry's quick answer, whitespace collapsed."""
    [path] = (REPO / "entries").glob(f"*/{entry}/entry.yaml")
    summary = yaml.safe_load(path.read_text(encoding="utf-8"))["summary"]
    return " ".join(summary.split()[:12])


def collapse(text: str) -> str:
    return " ".join(text.split())


STDOUT_BYTES = (
    b"epoch 1 \x1b[32mloss 0.5\x1b[0m\n"
    b" 10%|#         | 1/10\r 20%|##        | 2/10\r\n"
    b"\xff\xfe not UTF-8 \xc3\n"
    b"tab\there, no newline at the end"
)
STDERR_BYTES = b"warning: \x1b[33mdeprecated\x1b[0m\r\nsecond line without end"
# Prints both, each stream flushed.
STDOUT_SCRIPT = f"""
import sys
sys.stdout.buffer.write({STDOUT_BYTES!r}); sys.stdout.flush()
sys.stderr.buffer.write({STDERR_BYTES!r}); sys.stderr.flush()
"""


@pytest.mark.slow
def test_output_passes_through_byte_for_byte_and_streams_stay_apart() -> None:
    done = run("--", *python(STDOUT_SCRIPT))
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout == STDOUT_BYTES
    assert done.stderr.startswith(STDERR_BYTES)
    # What failpedia adds comes after the command's own output, on a line of its own.
    added = done.stderr[len(STDERR_BYTES) :].decode()
    assert added.startswith("\n")
    assert "no known failure" in added


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("sys.exit(0)", 0),
        ("sys.exit(3)", 3),
        ("os.kill(os.getpid(), signal.SIGKILL)", 128 + signal.SIGKILL),
        ("os.kill(os.getpid(), signal.SIGSEGV)", 128 + signal.SIGSEGV),
    ],
)
def test_exit_status_is_the_commands(statement: str, expected: int) -> None:
    done = run("--", *python(f"import os, signal, sys\n{statement}\n"))
    assert done.returncode == expected, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr


def test_a_command_that_cannot_start_is_reported_with_the_shells_code() -> None:
    done = run("--", "no-such-command-for-failpedia")
    assert done.returncode == 127
    assert b"no-such-command-for-failpedia" in done.stderr
    assert b"Traceback" not in done.stderr


def test_no_command_is_bad_usage() -> None:
    done = run()
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr


# Writes a marker line for every trapped signal, then exits 7 on the first one.
TRAP = """
import os, signal, sys, time
name, folder = sys.argv[1], sys.argv[2]
def trapped(number, frame):
    with open(os.path.join(folder, name), "a") as marker:
        marker.write(signal.Signals(number).name + "\\n")
    sys.exit(7)
signal.signal(signal.SIGINT, trapped)
signal.signal(signal.SIGTERM, trapped)
"""

PARENT = (
    TRAP
    + """
import subprocess
child = subprocess.Popen([sys.executable, "-c", sys.argv[3], "grandchild", folder, ""])
while not os.path.exists(os.path.join(folder, "grandchild-ready")):
    time.sleep(0.02)
print("ready", flush=True)
while True:
    time.sleep(0.1)
"""
)

GRANDCHILD = (
    TRAP
    + """
open(os.path.join(folder, "grandchild-ready"), "w").close()
while True:
    time.sleep(0.1)
"""
)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_signals_reach_the_commands_whole_process_group(number: int, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*CLI, "run", "--", sys.executable, "-c", PARENT, "child", str(tmp_path), GRANDCHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        # The line arrives while the command still runs: the output is live.
        assert process.stdout.readline() == b"ready\n"
        process.send_signal(number)
        process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()
    name = signal.Signals(number).name
    assert (tmp_path / "child").read_text() == f"{name}\n"
    for _ in range(100):  # the grandchild is nobody's to wait for: give it a moment
        if (tmp_path / "grandchild").exists():
            break
        time.sleep(0.05)
    assert (tmp_path / "grandchild").read_text() == f"{name}\n"
    assert process.returncode == 7


def _cascade_script() -> str:
    """Downstream NCCL timeouts on stdout first, the CUDA out-of-memory error that caused
    them on stderr after."""
    lines = (CORPUS / "nccl-oom-cascade.log").read_text(encoding="utf-8").splitlines()
    timeouts = [line for line in lines if "Watchdog caught collective" in line]
    oom = [line for line in lines if "OutOfMemoryError" in line]
    assert timeouts and oom
    return f"""
        import sys
        for line in {timeouts!r}:
            print(line, flush=True)
        print("Traceback (most recent call last):", file=sys.stderr)
        print({oom[0]!r}, file=sys.stderr, flush=True)
        sys.exit(1)
    """


def test_the_diagnosis_follows_the_output_with_the_initiating_failure_first() -> None:
    script = _cascade_script()
    bare = subprocess.run(python(script), capture_output=True, check=False)
    done = run("--", *python(script))
    assert done.returncode == 1
    assert done.stdout == bare.stdout
    assert done.stderr.startswith(bare.stderr)
    report = done.stderr[len(bare.stderr) :].decode()
    first = report.index("1. ")
    second = report.index("2. ")
    assert "cuda-oom" in report[first:second]
    assert "https://failpedia.github.io/failpedia/cuda/cuda-oom/" in report[first:second]
    assert summary_words("cuda-oom") in collapse(report[first:second])
    assert "nccl-watchdog-timeout" in report[second:]
    assert summary_words("nccl-watchdog-timeout") in collapse(report[second:])


# Writes a file to stdout in pieces of 1 to 300 bytes, flushing each, so that lines, escape
# sequences and carriage returns arrive cut anywhere.
DRIBBLE = """
import random, sys
data = open(sys.argv[1], "rb").read()
rng = random.Random(int(sys.argv[2]))
position = 0
while position < len(data):
    size = rng.randint(1, 300)
    sys.stdout.buffer.write(data[position : position + size])
    sys.stdout.flush()
    position += size
"""


@pytest.mark.slow
@pytest.mark.parametrize("log", corpus_logs(), ids=lambda path: path.name)
def test_output_cut_anywhere_is_diagnosed_as_the_file_is(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "diagnosis.json"
    done = run("--json", str(out), "--", sys.executable, "-c", DRIBBLE, str(log), "7")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout == log.read_bytes()
    streamed = json.loads(out.read_text(encoding="utf-8"))
    from_file = diagnose_json(str(log))
    assert essence(streamed) == essence(from_file)
    assert [item["text"] for item in streamed["unmatched"]] == [
        item["text"] for item in from_file["unmatched"]
    ]
    assert streamed["inputs"][0]["lines"] == from_file["inputs"][0]["lines"]


def test_json_file_holds_the_diagnose_shape(tmp_path: Path) -> None:
    out = tmp_path / "diagnosis.json"
    done = run("--json", str(out), "--", *python(_cascade_script()))
    assert done.returncode == 1
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["format"] == 1
    assert {"engine", "inputs", "findings", "unmatched", "warnings", "problems"} <= set(result)
    assert [item["name"] for item in result["inputs"]] == ["stdout", "stderr"]
    assert all(item["bytes"] > 0 and item["lines"] > 0 for item in result["inputs"])
    ids = [item["id"] for item in result["findings"]]
    assert ids[0] == "cuda-oom"
    assert "nccl-watchdog-timeout" in ids
    first = result["findings"][0]
    assert first["first"]["file"] == "stderr"
    assert first["first"]["line"] == 2
    assert first["first"]["before"] == ["Traceback (most recent call last):"]
    assert first["ranks"] == ["5"]


def test_unmatched_failure_lists_error_like_lines_with_context(tmp_path: Path) -> None:
    out = tmp_path / "diagnosis.json"
    log = (CORPUS / "no-known-failure.log").read_text(encoding="utf-8")
    script = f"import sys\nsys.stderr.write({log!r})\nsys.exit(1)\n"
    done = run("--json", str(out), "--context", "2", "--", *python(script))
    assert done.returncode == 1
    report = done.stderr[len(log.encode()) :].decode()
    assert "no known failure" in report
    assert "ValueError: bad schedule 'cosine-restarts'" in report
    assert "failpedia report" in report
    assert "Not matches, only the entries nearest in wording to these lines:" in report
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["findings"] == []
    assert result["nearest"] == diagnose_json(str(CORPUS / "no-known-failure.log"))["nearest"]
    assert result["nearest"] and all(item["id"] in report for item in result["nearest"])
    worst = next(item for item in result["unmatched"] if item["text"].startswith("ValueError"))
    assert worst["file"] == "stderr"
    assert worst["before"] == [
        '  File "/srv/train.py", line 190, in main',
        '    raise ValueError(f"bad schedule {cfg.schedule!r}")',
    ]


def test_an_unwritable_json_file_is_refused_before_the_command_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    done = run(
        "--json",
        str(tmp_path / "missing" / "out.json"),
        "--",
        *python(f"open({str(marker)!r}, 'w').close()"),
    )
    assert done.returncode == 2
    assert b"missing" in done.stderr
    assert not marker.exists()


COLOUR = """
import os, sys
print(f"stdout-tty={sys.stdout.isatty()} stderr-tty={sys.stderr.isatty()}")
print("\\x1b[31mred\\x1b[0m" if sys.stdout.isatty() else "plain", end="\\n", flush=True)
print("size", os.get_terminal_size(sys.stdout.fileno()).columns)
"""


def test_a_terminal_stays_a_terminal_and_keeps_its_colours() -> None:
    """Standard output is a pseudo-terminal here (raw, so bytes arrive as written): the
    command sees a terminal there, keeps its colours and the terminal's size; standard
    error, a pipe here, stays a pipe."""
    leader, follower = pty.openpty()
    tty.setraw(follower)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
    process = subprocess.Popen(
        [*CLI, "run", "--", *python(COLOUR)],
        stdout=follower,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    os.close(follower)
    received = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0
    assert received == (b"stdout-tty=True stderr-tty=False\n\x1b[31mred\x1b[0m\nsize 132\n")


def _peak_rss_kib(megabytes: int) -> int:
    """Peak memory of ``failpedia run`` (its own process or its matcher, whichever is
    larger; the command's stays the same) while the command prints ``megabytes`` MB of
    log lines, a known warning among them every few lines (a run that repeats one for
    days)."""
    printer = (
        "import sys\n"
        "bar = '[default1]: 12%|#2        | 120/1000 [00:12<01:28,  9.95it/s]\\r' * 20 + '\\n'\n"
        "warning = '[rank1]:[W611 03:00:00.000000 1 utils.py:1] torch._dynamo hit config."
        "recompile_limit (8)\\n'\n"
        "chunk = ((bar + '[default1]:[2024-06-11 03:00:00,000] INFO step 1200 loss 2.113\\n'"
        " + warning) * 2000).encode()\n"
        f"for _ in range({megabytes} * 1_000_000 // len(chunk) + 1):\n"
        "    sys.stdout.buffer.write(chunk)\n"
        "print('RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)')\n"
    )
    measure = (
        "import resource, sys\n"
        "from failpedia.cli.main import main\n"
        "code = main(['run', '--', sys.executable, '-c', sys.argv[1]])\n"
        "own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print('peak', max(own, children), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, printer],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert b"matmul-shapes-cannot-be-multiplied" in done.stderr
    assert b"dynamo-recompile-limit" in done.stderr
    peak = [line for line in done.stderr.decode().splitlines() if line.startswith("peak ")]
    return int(peak[-1].split()[1])


@pytest.mark.slow
def test_memory_stays_flat_as_the_output_grows() -> None:
    """Six times the output, about the same peak memory: nothing is held but bounded
    buffers."""
    growth_kib = _peak_rss_kib(120) - _peak_rss_kib(20)
    assert growth_kib < 30_000, f"peak memory grew by {growth_kib} KiB for 100 MB more output"


KEYBOARD = """
import os, signal, sys, time
def trapped(number, frame):
    with open(sys.argv[1], "a") as marker:
        marker.write(signal.Signals(number).name + "\\n")
    sys.exit(5)
signal.signal(signal.SIGINT, trapped)
line = sys.stdin.readline().strip()
print(f"read {line}; foreground {os.tcgetpgrp(0) == os.getpgrp()}", flush=True)
while True:
    time.sleep(0.1)
"""


def _read_until(leader: int, needle: bytes, seconds: float) -> bytes:
    received = b""
    deadline = time.monotonic() + seconds
    while needle not in received and time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                received += os.read(leader, 65536)
            except OSError:
                break
    return received


def _start_in_a_terminal(command: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``command`` in a new session whose controlling terminal is a new pty, as a
    shell in a terminal window would; return it and the terminal's leader side."""
    import fcntl
    import termios

    leader, follower = pty.openpty()

    def controlling_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        command,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
        preexec_fn=controlling_terminal,
    )
    os.close(follower)
    return process, leader


def test_in_its_terminal_the_command_reads_the_keyboard_and_gets_ctrl_c_once(
    tmp_path: Path,
) -> None:
    """Run from a terminal (its controlling one, in the foreground), the command's group
    gets the terminal: it reads a typed line instead of stopping on SIGTTIN, and Ctrl-C
    reaches it once, from the terminal itself."""
    marker = tmp_path / "signals"
    process, leader = _start_in_a_terminal([*CLI, "run", "--", *python(KEYBOARD), str(marker)])
    try:
        os.write(leader, b"hello\n")
        received = _read_until(leader, b"foreground", 60)
        assert b"read hello; foreground True" in received, received
        os.write(leader, b"\x03")  # Ctrl-C: the terminal signals its foreground group
        assert process.wait(timeout=60) == 5
    finally:
        process.kill()
        process.wait()
        os.close(leader)
    assert marker.read_text() == "SIGINT\n"


SHELL_LIKE = """
import os, subprocess, sys
done = subprocess.run(sys.argv[1:])
print(f"status {done.returncode}; foreground {os.tcgetpgrp(0) == os.getpgrp()}", flush=True)
"""


def test_a_command_that_cannot_start_leaves_the_terminal_to_its_owner() -> None:
    """Run from a terminal, a command that is not found hands nothing over for good: the
    terminal's foreground is ours again, as a shell expects to find it."""
    process, leader = _start_in_a_terminal(
        [*python(SHELL_LIKE), *CLI, "run", "--", "no-such-command-for-failpedia"]
    )
    try:
        received = _read_until(leader, b"foreground", 60)
        assert b"status 127; foreground True" in received, received
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        process.wait()
        os.close(leader)


BURST = """
import sys
bar = b" 10%|#         | 1/10 [00:01<00:09,  1.00it/s]\\r" * 4 + b"\\n"
for _ in range(BURSTS):
    sys.stdout.buffer.write(bar * 4000)
print("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)", flush=True)
"""


@pytest.mark.slow
def test_a_burst_of_output_is_matched_whole_and_leaves_no_spool(tmp_path: Path) -> None:
    """Output the matcher has not caught up with waits in a spool on disk, in files it
    reads in turn: 60 MB span several of them, every line is still matched, and the spool
    is gone when the diagnosis is printed."""
    environment = {**os.environ, "TMPDIR": str(tmp_path)}
    done = run("--", *python(BURST.replace("BURSTS", "320")), env=environment)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(done.stdout) > 60_000_000
    assert b"matmul-shapes-cannot-be-multiplied" in done.stderr
    assert b"first at stdout:1280001" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_without_a_place_for_the_spool_the_command_still_runs(tmp_path: Path) -> None:
    """Matching cannot start (no folder for the spool): the command runs, its output
    passes through and its exit status comes back; the report says why nothing was
    diagnosed."""
    missing = tmp_path / "missing"
    done = run("--spool", str(missing), "--", *python(STDOUT_SCRIPT + "\nsys.exit(4)\n"))
    assert done.returncode == 4
    assert done.stdout == STDOUT_BYTES
    assert done.stderr.startswith(STDERR_BYTES)
    assert b"failpedia: the output could not be diagnosed (matching could not start: " in (
        done.stderr
    )
    assert b"Traceback" not in done.stderr


def test_an_index_that_cannot_be_read_does_not_hold_the_command(tmp_path: Path) -> None:
    """A missing index stops ``run`` before the command starts (status 2); one that is
    there but cannot be parsed is found while the command runs, which still runs whole
    and keeps its status, and the report says why nothing was diagnosed."""
    missing = run("--index", str(tmp_path / "nope.json"), "--", "true")
    assert missing.returncode == 2
    assert b"nope.json: cannot read the signature index: No such file" in missing.stderr
    broken = tmp_path / "signatures.json"
    broken.write_text("{", encoding="utf-8")
    environment = {**os.environ, "TMPDIR": str(tmp_path / "spool")}
    (tmp_path / "spool").mkdir()
    burst = python(BURST.replace("BURSTS", "200") + "\nsys.exit(3)\n")
    done = run("--index", str(broken), "--", *burst, env=environment)
    assert done.returncode == 3
    assert len(done.stdout) > 35_000_000  # more than a spool file: spooling stops early
    report = done.stderr.decode()
    assert "failpedia: the output could not be diagnosed (" in report
    assert "signatures.json: cannot read the signature index: " in report
    assert "Traceback" not in report
    assert list((tmp_path / "spool").iterdir()) == []


def test_killed_outright_its_matcher_ends_and_removes_the_spool(tmp_path: Path) -> None:
    """SIGKILL leaves ``failpedia run`` no time to clean up; its matcher notices and does."""
    environment = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [*CLI, "run", "--", *python("import time; print('up', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"up\n"
        assert [path.name[:14] for path in tmp_path.iterdir()] == ["failpedia-run-"]
        process.kill()
        process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while list(tmp_path.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.iterdir()) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _spools(folder: Path) -> list[Path]:
    return [path for path in folder.iterdir() if path.name.startswith("failpedia-run-")]


# The line that ``matmul-shapes-cannot-be-multiplied`` matches, then filler, then the line
# that ``cuda-oom`` matches; exits 1.
FILLER_BYTES = 300_000
PAST_THE_CAP = f"""
import sys
out = sys.stdout.buffer
out.write(b"RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)\\n")
out.write(b"step 1 loss 0.5\\n" * ({FILLER_BYTES} // 16))
out.write(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
          b"has a total capacity of 79.11 GiB of which 1.06 GiB is free.\\n")
out.flush()
sys.exit(1)
"""


@pytest.mark.slow
def test_output_past_the_spools_cap_passes_through_and_is_noted_not_matched(
    tmp_path: Path,
) -> None:
    """A spool capped at 64 KiB: what came before the cap is matched, what came after is
    still passed through, byte for byte, and the diagnosis (text and JSON) says how much
    was not matched."""
    out = tmp_path / "diagnosis.json"
    bare = subprocess.run(python(PAST_THE_CAP), capture_output=True, check=False)
    done = run("--spool-cap", "64K", "--json", str(out), "--", *python(PAST_THE_CAP))
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    assert done.stdout == bare.stdout
    unmatched = len(bare.stdout) - 65536
    note = (
        f"{unmatched:,} bytes of output past the spool's cap of 65,536 bytes (set by "
        "--spool-cap) were passed through but not matched"
    )
    report = done.stderr.decode()
    assert note in collapse(report)
    assert "matmul-shapes-cannot-be-multiplied" in report
    assert "cuda-oom" not in report
    uncapped = run("--", *python(PAST_THE_CAP))
    assert b"cuda-oom" in uncapped.stderr  # what the cap kept from being matched
    assert "Traceback" not in report
    result = json.loads(out.read_text(encoding="utf-8"))
    assert [item["id"] for item in result["findings"]] == ["matmul-shapes-cannot-be-multiplied"]
    assert any(note in warning for warning in result["warnings"])


def test_a_bad_spool_cap_is_bad_usage() -> None:
    done = run("--spool-cap", "lots", "--", "true")
    assert done.returncode == 2
    assert b"--spool-cap" in done.stderr
    assert b"Traceback" not in done.stderr


# Writes more than the file-size limit the test sets, says so, and runs on until told to end.
SPOOL_FILLER = """
import os, sys, time
go = sys.argv[1]
sys.stdout.buffer.write(b"step 1 loss 0.5\\n" * 40_000)
print("written", flush=True)
while not os.path.exists(go):
    time.sleep(0.02)
print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", flush=True)
sys.exit(3)
"""


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.slow
def test_a_spool_that_cannot_be_written_is_removed_at_once_and_the_command_runs_on(
    tmp_path: Path,
) -> None:
    """A file-size limit (as a full disk would) stops the spool mid-write: its files are
    removed while the command still runs, the command's output keeps passing through, its
    status comes back, and the diagnosis says what happened."""
    spool = tmp_path / "spool"
    spool.mkdir()
    assert run("--", "true").returncode == 0  # the signature index is compiled and cached
    go = tmp_path / "go"
    process = subprocess.Popen(
        [*CLI, "run", "--spool", str(spool), "--", *python(SPOOL_FILLER), str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_file_size_limit(256 << 10),
    )
    try:
        assert process.stdout is not None
        head = b""
        while not head.endswith(b"written\n"):
            piece = process.stdout.read1(1 << 16)
            assert piece, "the command's output stopped"
            head += piece
        # The command is still running (it waits for ``go``): its spool must go now.
        for _ in range(600):
            if not _spools(spool):
                break
            time.sleep(0.05)
        assert _spools(spool) == []
        assert process.poll() is None
        go.touch()
        rest, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 3
    assert head + rest == b"step 1 loss 0.5\n" * 40_000 + b"written\n" + (
        b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    report = collapse(stderr.decode())
    assert "the spool could not be written (File too large)" in report
    assert "it was removed and the output from there on was passed through but not matched" in (
        report
    )
    assert "Traceback" not in report


SLEEPER = """
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
print("up", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("group", [False, True], ids=["wrapper-alone", "process-group"])
def test_a_spool_left_by_a_killed_run_is_removed_by_the_next(tmp_path: Path, group: bool) -> None:
    """SIGKILL to ``failpedia run`` (alone, or with its whole process group, its matcher
    too) leaves nobody to remove its spool; the next ``failpedia run`` finds it stale (no
    process holds it any longer) and removes it."""
    spool = tmp_path / "spool"
    spool.mkdir()
    pid_file = tmp_path / "command.pid"
    process = subprocess.Popen(
        [*CLI, "run", "--spool", str(spool), "--", *python(SLEEPER), str(pid_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    killed = False
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"up\n"
        [left] = _spools(spool)
        if group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.wait(timeout=60)
        killed = True
    finally:
        if not killed:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    done = run("--spool", str(spool), "--", "true")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    for _ in range(600):  # alone, its matcher may still be removing it
        if not left.exists():
            break
        time.sleep(0.05)
    assert not left.exists()
    assert _spools(spool) == []


CHECKPOINT_SIGNALS = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)
# Prints the name of every checkpoint signal it gets; exits 7 on SIGTERM.
TRAPS = """
import signal, sys, time
def trapped(number, frame):
    print(signal.Signals(number).name, flush=True)
for number in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):
    signal.signal(number, trapped)
signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(7))
print("ready", flush=True)
while True:
    time.sleep(0.1)
"""


@pytest.mark.slow
def test_checkpoint_signals_are_passed_on_to_the_command() -> None:
    """Schedulers (Slurm's ``--signal``) send SIGUSR1, SIGUSR2 or SIGALRM to ask for a
    checkpoint before they stop a job: the command gets each, and the run goes on."""
    process = subprocess.Popen(
        [*CLI, "run", "--", *python(TRAPS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        for number in CHECKPOINT_SIGNALS:
            process.send_signal(number)
            assert process.stdout.readline().decode().strip() == signal.Signals(number).name
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 7
    assert b"Traceback" not in stderr


@pytest.mark.slow
def test_the_diagnosis_is_scrubbed_but_the_output_is_passed_through_as_it_came(
    tmp_path: Path,
) -> None:
    """The report and --json are what gets attached to a CI run or an issue: they hold
    no token and no home folder, while the command's own output reaches the user whole."""
    token = "hf_" + "Q7w3E9rT" * 5
    line = (
        "RuntimeError: DataLoader worker (pid 123) is killed by signal: Killed. "
        f"/home/alice/run.py token={token}"
    )
    out = tmp_path / "diagnosis.json"
    done = run("--json", str(out), "--", *python(f"print({line!r}); raise SystemExit(1)"))
    assert done.returncode == 1, done.stderr
    assert token.encode() in done.stdout and b"/home/alice" in done.stdout
    report = done.stderr.decode()
    assert "dataloader-worker-killed-by-signal" in report, report
    written = out.read_text(encoding="utf-8")
    for text in (report, written):
        assert token not in text and "/home/alice" not in text, text
    first = json.loads(written)["findings"][0]["first"]["text"]
    assert "killed by signal" in first and "token=" in first, first
