"""Hostile reproducers are contained: ``failpedia verify`` on ``tests/fixtures/hostile``.

Each fixture reproducer attacks the machine that runs it: it reads the runner's
environment through ``/proc``, writes outside its folder, reaches the network, leaves a
double-forked grandchild behind, kills the runner, fills the disk or forks without end.
The runs here use bubblewrap (``--require-containment``), as CI does; a fake ``bwrap``
that cannot create namespaces stands for a machine without containment.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from failpedia.catalog.validate import load_catalog
from failpedia.verify import runner, sandbox
from verify_helpers import (
    HOSTILE_FIXTURE,
    LINUX,
    copy_project,
    git,
    processes_with,
    verify,
    verify_command,
    wait_for_processes,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LINUX, reason="containment uses Linux namespaces"),
]

PLANTED = "FAILPEDIA_PLANTED_SECRET"
PLANTED_NAME = "failpedia-planted-by-writes-outside"
CONTAINED_RUN = [
    "reads-parent-environ",
    "reads-all-environ",
    "writes-outside",
    "opens-network",
    "declares-network",
    "escapes-double-fork",
    "kills-verify",
]
EXPECTED = {
    "reads-parent-environ": "proved",
    "reads-all-environ": "proved",
    "writes-outside": "proved",
    "opens-network": "proved",
    "declares-network": "proved",
    "escapes-double-fork": "timed-out",
    "kills-verify": "proved",
}
FAKE_BWRAP = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"


def hostile_entry(entry_id: str) -> Any:
    catalog, problems = load_catalog(HOSTILE_FIXTURE / "entries", HOSTILE_FIXTURE)
    assert not problems, problems.report()
    return catalog.by_id[entry_id]


def entry_folder(root: Path, entry_id: str) -> Path:
    return next((root / "entries").glob(f"*/{entry_id}"))


def plant_markers(root: Path, *entry_ids: str) -> str:
    """Write a fresh marker into token.txt of each entry; return it."""
    marker = f"failpedia-escapee-{secrets.token_hex(8)}"
    for entry_id in entry_ids:
        (entry_folder(root, entry_id) / "token.txt").write_text(marker + "\n")
    return marker


@contextlib.contextmanager
def listening_server(root: Path, *entry_ids: str) -> Iterator[socket.socket]:
    """A TCP server on 127.0.0.1 whose port the given entries find in port.txt."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    for entry_id in entry_ids:
        (entry_folder(root, entry_id) / "port.txt").write_text(str(server.getsockname()[1]))
    try:
        yield server
    finally:
        server.close()


def senders(server: socket.socket) -> list[str]:
    """Who connected (the first line each sent); connections wait in the backlog."""
    server.setblocking(False)
    found = []
    while True:
        try:
            connection, _ = server.accept()
        except BlockingIOError:
            return sorted(found)
        with connection:
            connection.settimeout(5)
            found.append(connection.recv(256).decode().strip())


def fake_bwrap_path(folder: Path) -> str:
    """A PATH whose first ``bwrap`` fails as it does where user namespaces are disabled."""
    bin_dir = folder / "fake-bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(FAKE_BWRAP)
    (bin_dir / "bwrap").chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}"


@dataclass
class Run:
    root: Path
    process: subprocess.CompletedProcess[str]
    document: dict[str, Any]
    secret: str
    marker: str
    senders: list[str]

    def result(self, entry_id: str) -> dict[str, Any]:
        return next(item for item in self.document["results"] if item["entry"] == entry_id)


@pytest.fixture(scope="module")
def contained_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = copy_project(tmp_path_factory.mktemp("hostile"), HOSTILE_FIXTURE)
    marker = plant_markers(root, "escapes-double-fork")
    secret = f"planted-{secrets.token_hex(12)}"
    with listening_server(root, "opens-network", "declares-network") as server:
        process = verify(
            root,
            *CONTAINED_RUN,
            "--jobs",
            "4",
            "--json",
            "--no-record",
            "--require-containment",
            extra_env={PLANTED: secret},
        )
        connected = senders(server)
    assert "Traceback" not in process.stderr, process.stderr
    assert process.stdout, process.stderr
    return Run(root, process, json.loads(process.stdout), secret, marker, connected)


def test_every_attack_gets_its_verdict(contained_run: Run) -> None:
    verdicts = {item["entry"]: item["verdict"] for item in contained_run.document["results"]}
    assert verdicts == EXPECTED, contained_run.process.stderr
    assert contained_run.process.returncode == 1  # the timed-out one
    assert "containment: bubblewrap" in contained_run.process.stderr


def test_the_runners_environment_cannot_be_read(contained_run: Run) -> None:
    for where in (contained_run.process.stdout, contained_run.process.stderr):
        assert contained_run.secret not in where
    ancestors = contained_run.result("reads-parent-environ")["output_excerpt"]
    seen = r"ancestor \d+: (\d+ variables; planted: \[\]|unreadable \(Permission denied\))"
    assert re.search(seen, ancestors), ancestors
    assert "planted: ['" not in ancestors, ancestors
    # Every other process of the run (bubblewrap, the launcher) is closed to it.
    swept = contained_run.result("reads-all-environ")["output_excerpt"]
    assert re.search(r"SweepError: read \d+ environments", swept), swept
    assert "planted" not in swept, swept


def test_writes_outside_the_working_folder_leave_no_trace(contained_run: Run) -> None:
    text = contained_run.result("writes-outside")["output_excerpt"]
    assert "entry folder: blocked (Read-only file system)" in text, text
    assert re.search(r"home: blocked \((Read-only file system|Permission denied)\)", text), text
    root = contained_run.root
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    for path in (
        root / "entries" / "escapes" / "writes-outside" / PLANTED_NAME,
        root / PLANTED_NAME,
        root / ".git" / "hooks" / "post-checkout",
        home / PLANTED_NAME,
        Path("/tmp") / PLANTED_NAME,
        Path("/dev/shm") / PLANTED_NAME,
    ):
        assert not path.exists(), f"{path} was written from inside the sandbox"
    assert not (root / "verification").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=all").split() == [
        "??",
        "entries/escapes/declares-network/port.txt",
        "??",
        "entries/escapes/escapes-double-fork/token.txt",
        "??",
        "entries/escapes/opens-network/port.txt",
    ]


def test_the_network_is_cut_unless_the_entry_declares_it(contained_run: Run) -> None:
    assert contained_run.senders == ["declares-network", "declares-network"]
    blocked = contained_run.result("opens-network")["output_excerpt"]
    assert "network: blocked" in blocked, blocked
    assert "network: reached" in contained_run.result("declares-network")["output_excerpt"]


def test_a_double_forked_grandchild_dies_with_the_run(contained_run: Run) -> None:
    result = contained_run.result("escapes-double-fork")
    assert result["broken"]["timed_out"] is True
    assert "DoubleForkError: courier 9 escaped" in result["output_excerpt"]
    assert wait_for_processes(contained_run.marker, 0, seconds=5) == []


def test_a_reproducer_cannot_kill_the_runner(contained_run: Run) -> None:
    result = contained_run.result("kills-verify")
    assert result["broken"]["matched_lines"], result
    assert result["fixed"]["exit_code"] == 0


# ---------------------------------------------------------------- verify stopped midway


@pytest.mark.parametrize(
    ("signum", "exit_code"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["SIGTERM", "SIGINT", "SIGKILL"],
)
def test_stopping_verify_stops_its_runs_and_cleans_up(
    tmp_path: Path, signum: int, exit_code: int
) -> None:
    root = copy_project(tmp_path, HOSTILE_FIXTURE)
    marker = plant_markers(root, "outlives-verify")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    process = subprocess.Popen(
        verify_command(root, "outlives-verify", "--no-record", "--require-containment"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started = wait_for_processes(marker, 2)
        assert len(started) == 2, "the reproducer did not start its sleepers"
        process.send_signal(signum)
        _, errors = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == exit_code, errors
    assert wait_for_processes(marker, 0, seconds=10) == [], "a sleeper survived"
    assert not [path.name for path in scratch.iterdir()], "temporary folders were left"
    if signum != signal.SIGKILL:
        assert "interrupted" in errors and "Traceback" not in errors, errors


# ---------------------------------------------------------------- without containment


def test_without_containment_verify_says_what_is_not_enforced(tmp_path: Path) -> None:
    root = copy_project(tmp_path, HOSTILE_FIXTURE)
    marker = plant_markers(root, "escapes-double-fork")
    secret = f"planted-{secrets.token_hex(12)}"
    run = verify(
        root,
        "reads-parent-environ",
        "escapes-double-fork",
        "--no-record",
        "--json",
        "--unsafe-uncontained",
        extra_env={"PATH": fake_bwrap_path(tmp_path), PLANTED: secret},
    )
    assert run.returncode == 1, run.stderr  # escapes-double-fork times out
    assert "containment unavailable" in run.stderr
    assert "uid map: Permission denied" in run.stderr
    for unenforced in ("read-only", "network", "disk", "process limit"):
        assert unenforced in run.stderr.split("not enforced", 1)[1], run.stderr
    document = json.loads(run.stdout)
    assert secret not in run.stdout and secret not in run.stderr
    ancestors = next(r for r in document["results"] if r["entry"] == "reads-parent-environ")
    assert "planted: []" in ancestors["output_excerpt"], ancestors["output_excerpt"]
    assert wait_for_processes(marker, 0, seconds=5) == []


@pytest.mark.parametrize("flags", [[], ["--require-containment"]], ids=["default", "required"])
def test_without_containment_verify_refuses_to_run(tmp_path: Path, flags: list[str]) -> None:
    root = copy_project(tmp_path, HOSTILE_FIXTURE)
    marker = plant_markers(root, "escapes-double-fork")
    run = verify(
        root,
        "reads-parent-environ",
        "escapes-double-fork",
        *flags,
        extra_env={"PATH": fake_bwrap_path(tmp_path)},
    )
    assert run.returncode == 2, run.stderr
    assert "refusing to run reproducers uncontained" in run.stderr, run.stderr
    assert "apt-get install bubblewrap" in run.stderr and "--unsafe-uncontained" in run.stderr
    assert "uid map: Permission denied" in run.stderr  # why containment is unavailable
    assert not re.search(r"\] start ", run.stderr) and not run.stdout
    assert "Traceback" not in run.stderr
    assert processes_with(marker) == []


def test_unsafe_uncontained_and_require_containment_exclude_each_other(tmp_path: Path) -> None:
    root = copy_project(tmp_path, HOSTILE_FIXTURE)
    run = verify(root, "reads-parent-environ", "--require-containment", "--unsafe-uncontained")
    assert run.returncode == 2 and "not allowed with" in run.stderr, run.stderr


# ---------------------------------------------------------------- limits, in process


@pytest.fixture(scope="module")
def containment() -> sandbox.Containment:
    found = sandbox.detect(sys.executable)
    if found.problem is not None:
        pytest.fail(f"containment is unavailable here: {found.problem}")
    return found


def test_the_disk_quota_holds(containment: sandbox.Containment) -> None:
    item = hostile_entry("fills-disk")
    limits = sandbox.Limits(scratch_bytes=16 << 20)
    captured = runner.run_mode(
        item.folder / "repro.py", [], 60, item.patterns, containment=containment, limits=limits
    )
    text = captured.output.excerpt()
    for place in ("cwd", "shm"):
        found = re.search(rf"{place}: wrote (\d+) MiB, then (.+)", text)
        assert found, text
        assert int(found.group(1)) <= 16 and found.group(2) == "No space left on device", text


def test_the_process_limit_holds(containment: sandbox.Containment) -> None:
    item = hostile_entry("forks-many")
    limits = sandbox.Limits(processes=64)
    captured = runner.run_mode(
        item.folder / "repro.py", [], 60, item.patterns, containment=containment, limits=limits
    )
    text = captured.output.excerpt()
    found = re.search(r"processes: started (\d+), then (.+)", text)
    assert found, text
    assert int(found.group(1)) < 64 and found.group(2) == "Resource temporarily unavailable", text
    assert captured.result.matched


def test_gpu_entries_see_the_nvidia_devices(tmp_path: Path) -> None:
    """The device nodes a CUDA reproducer needs are bound into its sandbox (the GPU
    runner proves the rest: a CUDA entry that runs there is proved)."""
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"):
        (tmp_path / name).touch()
    (tmp_path / "nvidia-caps").mkdir()
    (tmp_path / "null").touch()
    found = sandbox.gpu_device_paths(tmp_path)
    assert [path.name for path in found] == [
        "nvidia-caps",
        "nvidia-uvm",
        "nvidia-uvm-tools",
        "nvidia0",
        "nvidia1",
        "nvidiactl",
    ]


# ---------------------------------------------------------------- the host and the proof


@contextlib.contextmanager
def host_socket(root: Path) -> Iterator[socket.socket | None]:
    """A unix socket of the host, where a container engine's or a session bus's would
    be (/run, when this user may write there), named in reaches-host's socket.txt."""
    place = Path("/run") if os.access("/run", os.W_OK) else None
    if place is None:
        yield None
        return
    path = place / f"failpedia-test-{secrets.token_hex(6)}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(16)
    (entry_folder(root, "reaches-host") / "socket.txt").write_text(str(path))
    try:
        yield server
    finally:
        server.close()
        path.unlink()


@pytest.fixture(scope="module")
def host_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, list[str]]:
    root = copy_project(tmp_path_factory.mktemp("host"), HOSTILE_FIXTURE)
    with host_socket(root) as server:
        process = verify(root, "reaches-host", "forges-proof", "--json", "--no-record")
        connected = senders(server) if server is not None else []
    assert "Traceback" not in process.stderr, process.stderr
    document = json.loads(process.stdout)
    return Run(root, process, document, "", "", connected), connected


def test_no_unix_socket_of_the_host_can_be_reached(host_run: tuple[Run, list[str]]) -> None:
    run, connected = host_run
    text = run.result("reaches-host")["output_excerpt"]
    assert run.result("reaches-host")["verdict"] == "proved", run.process.stderr
    assert connected == [], text
    assert ": connected" not in text, text
    if not os.access("/run", os.W_OK):
        pytest.skip("this user cannot put a socket in /run; the rest was checked")


def test_dev_is_read_only_and_root_only_files_stay_closed(
    host_run: tuple[Run, list[str]],
) -> None:
    text = host_run[0].result("reaches-host")["output_excerpt"]
    assert "dev: refused (Read-only file system)" in text, text
    assert ": read\n" not in text, text
    assert re.search(r"read /etc/shadow: refused \((Permission denied|No such file)", text), text
    uid = int(re.search(r"uid (\d+)", text).group(1))  # type: ignore[union-attr]
    assert uid != 0 or os.geteuid() != 0, "a runner working as root ran the reproducer as root"


def test_a_fixed_mode_cannot_forge_its_proof(host_run: tuple[Run, list[str]]) -> None:
    result = host_run[0].result("forges-proof")
    assert result["verdict"] == "fix-failed", result
    assert result["fixed"]["exit_code"] == 1, result
    assert result["fixed"]["check_passed"] is False, result


def test_a_memory_limit_holds(containment: sandbox.Containment) -> None:
    item = hostile_entry("eats-memory")
    limits = sandbox.Limits(memory_bytes=256 << 20)
    captured = runner.run_mode(
        item.folder / "repro.py", [], 60, item.patterns, containment=containment, limits=limits
    )
    text = captured.output.excerpt()
    found = re.search(r"memory: allocated (\d+) MiB, then (.+)", text)
    assert found, text
    assert int(found.group(1)) < 256 and found.group(2) == "MemoryError", text
    assert captured.result.matched and captured.result.exit_code == 1, text
