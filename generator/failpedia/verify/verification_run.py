"""The verification run behind ``failpedia verify``: select the entries (ids, ``--since``,
``--changed``'s plan, a shard), run the reproducers both ways, show progress, write
records, print the summary.

It says first how reproducers are contained; where they cannot be, it refuses to run
them unless ``--unsafe-uncontained`` asks for it. SIGINT and SIGTERM stop the running
reproducers, remove their temporary folders, and exit 130 and 143.
"""

from __future__ import annotations

import difflib
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from failpedia.catalog.catalog import Catalog, CatalogEntry
from failpedia.settings import ProjectSettings
from failpedia.verify import environment as machine
from failpedia.verify import fingerprint, records, runner, sandbox, selection
from failpedia.verify.results import (
    SKIPPED,
    VERDICTS,
    ModeResult,
    VerificationResult,
    load_record,
    record_path,
)


@dataclass(frozen=True)
class VerifyOptions:
    """What the command line asked of the run (``failpedia verify --help`` says each)."""

    ids: tuple[str, ...] = ()
    device: str = "auto"
    jobs: int = 1
    since: str | None = None
    changed: bool = False
    rotation: int | None = None
    json: bool = False
    require_packages: bool = False
    unsafe_uncontained: bool = False
    record: bool = True
    records: Path | None = None
    shard: tuple[int, int] | None = None


def _changed_entries(
    root: Path, ref: str, entries: list[CatalogEntry], record_dir: Path
) -> list[CatalogEntry]:
    """Entries whose folder holds a file changed since ``ref`` or in the working tree, or
    whose record did: a record that changed makes a new claim of proof.

    Raises ValueError (bad usage) when git cannot answer.
    """

    def git(*args: str, cwd: Path) -> str:
        try:
            done = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, check=False
            )
        except OSError as error:
            raise ValueError(f"cannot run git: {error}") from None
        if done.returncode != 0:
            message = (done.stderr.strip().splitlines() or ["git failed"])[-1]
            raise ValueError(f"git {' '.join(args)}: {message}")
        return done.stdout

    top = Path(git("rev-parse", "--show-toplevel", cwd=root).strip()).resolve()
    git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=top)
    names = git("diff", "--name-only", "-z", ref, "--", cwd=top).split("\0")
    names += git("ls-files", "--others", "--exclude-standard", "-z", cwd=top).split("\0")
    changed = [top / name for name in names if name]
    return [
        item
        for item in entries
        if any(path.is_relative_to(item.folder.resolve()) for path in changed)
        or record_path(record_dir.resolve(), item.entry.id) in changed
    ]


def _device_filter(item: CatalogEntry, device: str) -> str | None:
    """Why ``--device`` leaves this entry out, or None when it runs."""
    needs_gpu = item.reproducer.device in machine.GPU_DEVICES
    if device == "cpu" and needs_gpu:
        return f"needs a GPU (device: {item.reproducer.device}); not run with --device cpu"
    if device == "cuda" and not needs_gpu:
        return "CPU entry; not run with --device cuda"
    return None


def verify_exit_code(results: list[VerificationResult], require_packages: bool = False) -> int:
    """0 when every result passed (proved or skipped), else 1.

    A stale entry (broken mode no longer reproduces on a newer release than the one it
    was proved on) shows up here as not-reproduced, so it fails the run too. With
    ``require_packages`` (CI, which installs every declared package) a skip for a missing
    or mismatched requirement fails as well; a skip for a missing GPU never does.
    """
    if require_packages and any(
        result.verdict == SKIPPED and result.reason.startswith("requires ") for result in results
    ):
        return 1
    return 0 if all(result.passed for result in results) else 1


class _Stopped(Exception):
    """SIGINT or SIGTERM arrived while reproducers ran."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _SignalGuard:
    """In its ``with`` block, SIGINT and SIGTERM raise ``_Stopped`` (main thread only)
    until ``quiet()``, after which they are ignored so that stopping the runs is not cut
    short; the previous handlers come back at the end."""

    def __init__(self) -> None:
        self.raising = True
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.raising:
            raise _Stopped(signum)

    def quiet(self) -> None:
        self.raising = False

    def __enter__(self) -> _SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def _seconds(mode: ModeResult | None) -> str:
    return "-" if mode is None else f"{mode.seconds:.1f}"


def _counts(results: list[VerificationResult]) -> dict[str, int]:
    return {verdict: sum(result.verdict == verdict for result in results) for verdict in VERDICTS}


def _summary_table(results: list[VerificationResult]) -> str:
    rows = [("entry", "verdict", "broken s", "fixed s", "reason")]
    rows += [(r.entry, r.verdict, _seconds(r.broken), _seconds(r.fixed), r.reason) for r in results]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    lines = []
    for row in rows:
        cells = [
            row[0].ljust(widths[0]),
            row[1].ljust(widths[1]),
            row[2].rjust(widths[2]),
            row[3].rjust(widths[3]),
            row[4],
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _plan_changed(
    items: list[CatalogEntry],
    options: VerifyOptions,
    record_dir: Path,
    environment: dict[str, Any],
    changed_since: set[str] | None,
) -> tuple[list[CatalogEntry], list[selection.Planned]]:
    """``--changed``: the entries to prove, after the plan is printed (each with its reason)
    on stderr; entries for a device this run does not use are left out."""
    capabilities = machine.Capabilities.from_fingerprint(environment)
    runnable = [
        item
        for item in items
        if _device_filter(item, options.device) is None
        and machine.missing_device(item, capabilities) is None
    ]
    since = [item for item in runnable if item.entry.id in (changed_since or set())]
    records_here = {}
    for item in runnable:
        record, problem = load_record(record_dir, item.entry.id)
        records_here[item.entry.id] = record
        if problem is not None:
            print(f"warning: {problem}", file=sys.stderr)
    count = 7 if options.rotation is None else options.rotation
    today = datetime.now(UTC).date()
    rotation = (selection.rotation_share(today, count), count) if count else None
    rest = [item for item in runnable if item.entry.id not in (changed_since or set())]
    planned = [
        selection.Planned(item, selection.CHANGED, f"changed since {options.since}")
        for item in since
    ]
    planned += selection.plan(rest, records_here, environment, rotation)
    order = {item.entry.id: number for number, item in enumerate(items)}
    planned.sort(key=lambda chosen: order[chosen.item.entry.id])
    share = (
        f"rotation: share {rotation[0]} of {count} for {today.isoformat()} (UTC), every "
        f"entry at least once in {count} days"
        if rotation
        else "no rotation"
    )
    print(
        f"failpedia verify --changed: proving {len(planned)} of {len(runnable)} entries ({share})",
        file=sys.stderr,
    )
    width = max((len(chosen.reason) for chosen in planned), default=0)
    for chosen in planned:
        line = f"  {chosen.reason:<{width}}  {chosen.item.entry.id}: {chosen.detail}"
        print(line, file=sys.stderr)
    current = len(runnable) - len(planned)
    print(
        f"failpedia verify --changed: {current} left out, their records prove them as they "
        "are here",
        file=sys.stderr,
    )
    if len(items) > len(runnable):
        print(
            f"failpedia verify --changed: {len(items) - len(runnable)} left out, for a device "
            "this run does not use",
            file=sys.stderr,
            flush=True,
        )
    return [chosen.item for chosen in planned], planned


def run_verification(options: VerifyOptions, settings: ProjectSettings, catalog: Catalog) -> int:
    """Verify the selected entries of ``catalog``; the exit code ``failpedia verify`` gives
    (its epilog lists them)."""
    root = settings.root
    if options.ids and (options.since or options.changed):
        print("failpedia verify: give entry ids, or --since/--changed, not both", file=sys.stderr)
        return 2
    if options.rotation is not None and not options.changed:
        print("failpedia verify: --rotation goes with --changed", file=sys.stderr)
        return 2
    if options.ids:
        unknown = [entry_id for entry_id in options.ids if entry_id not in catalog.by_id]
        for entry_id in unknown:
            hint = difflib.get_close_matches(entry_id, list(catalog.by_id), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            print(f"failpedia verify: unknown entry id {entry_id!r}{suggestion}", file=sys.stderr)
        if unknown:
            return 2
        selected = [item for item in catalog.entries if item.entry.id in set(options.ids)]
    else:
        selected = list(catalog.entries)
    # Entries changed since a git ref: the selection, or with --changed added to its plan.
    changed_since = None
    if options.since:
        try:
            changed = _changed_entries(root, options.since, selected, settings.records_dir)
        except ValueError as error:
            print(f"failpedia verify: --since {options.since}: {error}", file=sys.stderr)
            return 2
        changed_since = {item.entry.id for item in changed}
        if not options.changed:
            selected = changed

    # An entry documented from public reports has nothing to run.
    for item in selected:
        if item.entry.reproducer is None and options.ids:
            print(
                f"failpedia verify: {item.entry.id}: documented from public reports; "
                "it has no reproducer to run",
                file=sys.stderr,
            )
    selected = [item for item in selected if item.entry.reproducer is not None]
    if options.shard is not None:
        selected = [item for item in selected if selection.in_shard(item.entry.id, *options.shard)]
    containment = sandbox.detect(sys.executable)
    if selected and not containment.available and not options.unsafe_uncontained:
        print(
            f"failpedia verify: containment unavailable: {containment.problem}\n"
            "failpedia verify: refusing to run reproducers uncontained: they are code from "
            "pull requests, and here they would run with your user's rights (your files, "
            "the network, every process you may signal). Install bubblewrap (apt-get "
            "install bubblewrap) and allow user namespaces; or, only for code you have "
            "read, pass --unsafe-uncontained",
            file=sys.stderr,
        )
        return 2
    if selected:
        print(containment.summary(), file=sys.stderr, flush=True)
    packages = {
        name
        for item in selected
        for name in machine.requirement_names(item.reproducer.requirements)
    }
    environment = fingerprint.gather(packages)
    plan: list[selection.Planned] = []
    if options.changed:
        selected, plan = _plan_changed(
            selected, options, settings.records_dir, environment, changed_since
        )
    capabilities = machine.Capabilities.from_fingerprint(environment)
    record_dir = options.records.resolve() if options.records else settings.records_dir
    total = len(selected)
    lock = threading.Lock()
    cancel = threading.Event()

    running: dict[str, float] = {}  # entry id -> start time, for the live line
    live = sys.stderr.isatty()
    finished = threading.Event()

    def progress(number: int, text: str) -> None:
        with lock:
            if live:
                sys.stderr.write("\r\033[K")  # clear the live line first
            print(f"[{number:>{len(str(total))}}/{total}] {text}", file=sys.stderr, flush=True)

    def live_line() -> None:
        """On a terminal, one line that counts up the elapsed time of what is running."""
        width = shutil.get_terminal_size().columns - 1
        while not finished.wait(1.0):
            now = time.monotonic()
            with lock:
                if running:
                    parts = [f"{name} {now - start:.0f} s" for name, start in running.items()]
                    text = "running: " + ", ".join(parts)
                    sys.stderr.write("\r\033[K" + text[:width])
                    sys.stderr.flush()

    def verify_one(number: int, item: CatalogEntry) -> VerificationResult:
        entry_id = item.entry.id
        started = time.monotonic()
        reason = _device_filter(item, options.device) or machine.skip_reason(item, capabilities)
        if reason is not None:
            result = machine.skipped_result(item, reason)
        else:
            progress(number, f"start   {entry_id}")
            with lock:
                running[entry_id] = started
            try:
                result = runner.verify_entry(
                    item, capabilities, cancel=cancel, containment=containment
                )
            finally:
                with lock:
                    running.pop(entry_id, None)
        if cancel.is_set():
            return result
        elapsed = time.monotonic() - started
        progress(number, f"{result.verdict:<14} {entry_id} ({elapsed:.1f} s)")
        if options.record and result.verdict != SKIPPED:
            try:
                _, problem = records.update_record(record_dir, result, environment)
            except OSError as error:
                problem = f"cannot write the record of {entry_id}: {error}"
            if problem:
                with lock:
                    print(f"warning: {problem}", file=sys.stderr, flush=True)
        return result

    if not selected:
        print("failpedia verify: no entries selected", file=sys.stderr)
    executor = ThreadPoolExecutor(max_workers=options.jobs, thread_name_prefix="failpedia-verify")
    if live:
        threading.Thread(target=live_line, daemon=True).start()
    with _SignalGuard() as signals:
        try:
            futures = [
                executor.submit(verify_one, number, item) for number, item in enumerate(selected, 1)
            ]
            results = [future.result() for future in futures]
        except (_Stopped, KeyboardInterrupt) as stop:
            signals.quiet()
            cancel.set()
            executor.shutdown(wait=True, cancel_futures=True)
            finished.set()
            print("failpedia verify: interrupted; reproducers stopped", file=sys.stderr)
            return 128 + stop.signum if isinstance(stop, _Stopped) else 130
    executor.shutdown(wait=True)
    finished.set()
    if live:
        sys.stderr.write("\r\033[K")

    counts = _counts(results)
    if options.json:
        document: dict[str, Any] = {
            "environment": environment,
            "results": [result.to_dict() for result in results],
            "counts": counts,
        }
        if options.changed:
            document["plan"] = [
                {"entry": chosen.item.entry.id, "reason": chosen.reason, "detail": chosen.detail}
                for chosen in plan
            ]
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        if results:
            print(_summary_table(results))
        summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
        print(f"{len(results)} entr{'y' if len(results) == 1 else 'ies'}: {summary or 'none'}")
    return verify_exit_code(results, options.require_packages)
