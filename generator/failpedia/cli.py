"""The ``failpedia`` command: validate, scaffold, render, publish the schema, verify,
build the signature index, diagnose logs, explain an entry.

Exit codes: 0 success; 1 problems found in entries; 2 bad usage.

``failpedia diagnose``: 0 when at least one known failure was found; 1 when none was;
2 when an input could not be read (findings from the other inputs are still printed),
or no signature index is available; 130 interrupted.

``failpedia verify`` (see ``VERIFY_EPILOG``): 0 when every selected entry was proved or
skipped for a missing device or requirement; 1 when any was not reproduced, failed its
fix, timed out or hit a harness error (or the entries have problems); 2 bad usage
(unknown id, bad git ref); 130 interrupted.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import fingerprint, records, runner, sigindex
from .catalog import Catalog, CatalogEntry
from .problems import ProblemList
from .proof import load_proofs
from .render import SiteSettings, render_site, write_pages
from .scaffold import scaffold_entry
from .schema import SCHEMA_FILENAMES, schema_text, write_schemas
from .siteconfig import read_site_config
from .validator import load_catalog, load_categories


def _paths(args: argparse.Namespace) -> tuple[Path, Path]:
    root = Path(args.root).resolve()
    return root, root / read_site_config(root / "mkdocs.yml").entries_dir


def _report(problems: ProblemList) -> int:
    """Print every problem and their count to stderr; the exit code for problems."""
    print(problems.report(), file=sys.stderr)
    count = len(problems)
    print(f"{count} problem{'s' * (count > 1)} found.", file=sys.stderr)
    return 1


def _engine_problems(catalog: Catalog, root: Path) -> ProblemList:
    """Patterns that pass the dialect but that Hyperscan, the linear-time engine behind
    ``failpedia diagnose``, would refuse (too large a repeat, for one)."""
    from .matcher import engine_refusals
    from .yamlsource import parse_yaml

    located = [
        (item, number, pattern)
        for item in catalog.entries for number, pattern in enumerate(item.patterns)
    ]
    refused = engine_refusals([pattern.canonical for _, _, pattern in located]) or {}
    problems = ProblemList()
    for position, reason in sorted(refused.items()):
        item, number, _ = located[position]
        document = parse_yaml(item.path.read_text(encoding="utf-8"))
        line = document.line_of(("signatures", number, "pattern"))
        problems.add(item.display_path, line, f"signatures[{number}].pattern",
                     f"the matching engine refuses this pattern: {reason}")
    return problems


def cmd_validate(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return _report(problems)
    problems = _engine_problems(catalog, root)
    if problems:
        return _report(problems)
    categories = len({item.entry.category for item in catalog.entries})
    print(f"{len(catalog.entries)} entries in {categories} categories: no problems.")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    problems = ProblemList()
    categories = {category.id for category in load_categories(entries_dir, root, problems)}
    if problems:
        return _report(problems)
    try:
        folder = scaffold_entry(entries_dir, args.target, categories)
    except ValueError as error:
        print(f"failpedia new: {error}", file=sys.stderr)
        return 2
    print(f"created {folder.relative_to(root)}/entry.yaml and repro.py")
    print("fill in every TODO; `failpedia validate` names each one left")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    site = read_site_config(root / "mkdocs.yml")
    proofs, record_problems = load_proofs(catalog, root / site.records_dir, root)
    problems.extend(record_problems)
    if problems:
        return _report(problems)
    settings = SiteSettings(site.edit_base)
    pages = render_site(catalog, root / site.templates_dir, settings, proofs)
    out = Path(args.out)
    write_pages(pages, out)
    print(f"wrote {len(pages)} pages to {out}")
    return 0


def cmd_requirements(args: argparse.Namespace) -> int:
    """Print the pinned packages the selected reproducers declare, for `pip install`."""
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return _report(problems)
    pins = sorted(
        {
            requirement
            for item in catalog.entries
            if args.device in ("all", item.entry.reproducer.device)
            for requirement in item.entry.reproducer.requirements
        }
    )
    for pin in pins:
        print(pin)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    if args.check:
        stale = [
            name
            for name, model in SCHEMA_FILENAMES.items()
            if not (entries_dir / name).is_file()
            or (entries_dir / name).read_text(encoding="utf-8") != schema_text(model)
        ]
        for name in stale:
            print(f"{entries_dir / name} is out of date; run `failpedia schema`", file=sys.stderr)
        return 1 if stale else 0
    for path in write_schemas(entries_dir):
        print(f"wrote {path.relative_to(root)}")
    return 0


VERIFY_EPILOG = """\
Runs each selected entry's reproducer twice, in a fresh subprocess with a clean
environment and the entry's time limit: `python repro.py` must print a line matching one
of the entry's signatures; `python repro.py --fixed` must exit 0 and print none.
Verdicts: proved, not-reproduced, fix-failed, timed-out, harness-error, skipped.
Records go to verification/<id>.json (newest result per environment) unless --no-record.

exit codes:
  0  every selected entry proved, or skipped for a missing device or requirement
     (with --require-packages, a missing requirement is a failure)
  1  any entry not-reproduced, fix-failed, timed-out or harness-error; or entry problems
  2  bad usage: unknown entry id, bad git ref
  130 interrupted
"""


def _changed_entries(root: Path, ref: str, entries: list[CatalogEntry]) -> list[CatalogEntry]:
    """Entries whose folder holds a file changed since ``ref`` or in the working tree.

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
    ]


def _device_filter(item: CatalogEntry, device: str) -> str | None:
    """Why ``--device`` leaves this entry out, or None when it runs."""
    needs_gpu = item.entry.reproducer.device in runner.GPU_DEVICES
    if device == "cpu" and needs_gpu:
        return f"needs a GPU (device: {item.entry.reproducer.device}); not run with --device cpu"
    if device == "cuda" and not needs_gpu:
        return "CPU entry; not run with --device cuda"
    return None


def verify_exit_code(
    results: list[runner.VerificationResult], require_packages: bool = False
) -> int:
    """0 when every result passed (proved or skipped), else 1.

    A stale entry (broken mode no longer reproduces on a newer release than the one it
    was proved on) shows up here as not-reproduced, so it fails the run too. With
    ``require_packages`` (CI, which installs every declared package) a skip for a missing
    or mismatched requirement fails as well; a skip for a missing GPU never does.
    """
    if require_packages and any(
        result.verdict == runner.SKIPPED and result.reason.startswith("requires ")
        for result in results
    ):
        return 1
    return 0 if all(result.passed for result in results) else 1


def _seconds(mode: runner.ModeResult | None) -> str:
    return "-" if mode is None else f"{mode.seconds:.1f}"


def _counts(results: list[runner.VerificationResult]) -> dict[str, int]:
    return {
        verdict: sum(result.verdict == verdict for result in results)
        for verdict in runner.VERDICTS
    }


def _summary_table(results: list[runner.VerificationResult]) -> str:
    rows = [("entry", "verdict", "broken s", "fixed s", "reason")]
    rows += [
        (r.entry, r.verdict, _seconds(r.broken), _seconds(r.fixed), r.reason) for r in results
    ]
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


def cmd_verify(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return _report(problems)
    if args.ids and args.since:
        print("failpedia verify: give entry ids or --since, not both", file=sys.stderr)
        return 2
    if args.ids:
        unknown = [entry_id for entry_id in args.ids if entry_id not in catalog.by_id]
        for entry_id in unknown:
            hint = difflib.get_close_matches(entry_id, list(catalog.by_id), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            print(f"failpedia verify: unknown entry id {entry_id!r}{suggestion}", file=sys.stderr)
        if unknown:
            return 2
        selected = [item for item in catalog.entries if item.entry.id in set(args.ids)]
    elif args.since:
        try:
            selected = _changed_entries(root, args.since, catalog.entries)
        except ValueError as error:
            print(f"failpedia verify: --since {args.since}: {error}", file=sys.stderr)
            return 2
    else:
        selected = list(catalog.entries)

    packages = {
        name
        for item in selected
        for name in runner.requirement_names(item.entry.reproducer.requirements)
    }
    environment = fingerprint.gather(packages)
    capabilities = runner.Capabilities.from_fingerprint(environment)
    record_dir = root / records.RECORDS_DIRNAME
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

    def verify_one(number: int, item: CatalogEntry) -> runner.VerificationResult:
        entry_id = item.entry.id
        started = time.monotonic()
        reason = _device_filter(item, args.device) or runner.skip_reason(item, capabilities)
        if reason is not None:
            result = runner.skipped_result(item, reason)
        else:
            progress(number, f"start   {entry_id}")
            with lock:
                running[entry_id] = started
            try:
                result = runner.verify_entry(item, capabilities, cancel=cancel)
            finally:
                with lock:
                    running.pop(entry_id, None)
        if cancel.is_set():
            return result
        elapsed = time.monotonic() - started
        progress(number, f"{result.verdict:<14} {entry_id} ({elapsed:.1f} s)")
        if args.record and result.verdict != runner.SKIPPED:
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
    executor = ThreadPoolExecutor(max_workers=args.jobs, thread_name_prefix="failpedia-verify")
    if live:
        threading.Thread(target=live_line, daemon=True).start()
    try:
        futures = [
            executor.submit(verify_one, number, item) for number, item in enumerate(selected, 1)
        ]
        results = [future.result() for future in futures]
    except KeyboardInterrupt:
        cancel.set()
        executor.shutdown(wait=True, cancel_futures=True)
        finished.set()
        print("failpedia verify: interrupted; reproducers stopped", file=sys.stderr)
        return 130
    executor.shutdown(wait=True)
    finished.set()
    if live:
        sys.stderr.write("\r\033[K")

    counts = _counts(results)
    if args.json:
        document = {
            "environment": environment,
            "results": [result.to_dict() for result in results],
            "counts": counts,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        if results:
            print(_summary_table(results))
        summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
        print(f"{len(results)} entr{'y' if len(results) == 1 else 'ies'}: {summary or 'none'}")
    return verify_exit_code(results, args.require_packages)


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, not {text!r}")
    return value


def _load_index(args: argparse.Namespace) -> sigindex.SignatureIndex:
    return sigindex.load_index(
        Path(args.index) if args.index else None,
        Path(args.entries) if args.entries else None,
    )


def cmd_diagnose(args: argparse.Namespace) -> int:
    from .diagnose import diagnose
    from .diagnose_output import diagnosis_json, diagnosis_text
    from .logsource import collect_inputs

    if not args.paths and sys.stdin.isatty():
        print("failpedia diagnose: give log files or folders, or pipe a log into '-'",
              file=sys.stderr)
        return 2
    try:
        index = _load_index(args)
    except sigindex.IndexUnavailable as error:
        print(f"failpedia diagnose: {error}", file=sys.stderr)
        return 2
    inputs, problems = collect_inputs(args.paths)
    result = diagnose(inputs, index, context=args.context, engine_name=args.engine)
    result.problems[:0] = problems
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for problem in result.problems:
        print(f"error: {problem}", file=sys.stderr)
    print(diagnosis_json(result) if args.json else diagnosis_text(result))
    if result.problems:
        return 2
    return 0 if result.findings else 1


def cmd_explain(args: argparse.Namespace) -> int:
    from .explain import explain_text

    try:
        texts = sigindex.load_entry_texts(Path(args.entries) if args.entries else None)
        index = _load_index(args)
    except sigindex.IndexUnavailable as error:
        print(f"failpedia explain: {error}", file=sys.stderr)
        return 2
    entry = texts.get(args.id)
    if entry is None:
        close = difflib.get_close_matches(args.id, list(texts), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        print(f"failpedia explain: no entry {args.id!r}{hint}", file=sys.stderr)
        return 2
    indexed = next(item for item in index.entries if item.id == args.id)
    print(explain_text(entry, index.url(indexed)), end="")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    root, entries_dir = _paths(args)
    catalog, problems = load_catalog(entries_dir, root)
    if problems:
        return _report(problems)
    site_url = read_site_config(root / "mkdocs.yml").site_url
    for path in sigindex.write_package_data(catalog, site_url, Path(args.out)):
        print(f"wrote {path}")
    return 0


def _index_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--index", metavar="FILE", help="a signatures.json to use")
    command.add_argument(
        "--entries", metavar="DIR",
        help="compile the index from this entries folder (default: the installed index, "
        "or the checkout's entries/)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="failpedia", description="Failpedia: ML training failures, proved by reproducers."
    )
    parser.add_argument(
        "--root", default=".", help="project folder holding entries/ and mkdocs.yml (default: .)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("validate", help="check every entry; report all problems").set_defaults(
        handler=cmd_validate
    )
    new = commands.add_parser("new", help="scaffold entries/<category>/<id>/")
    new.add_argument("target", metavar="CATEGORY/ID")
    new.set_defaults(handler=cmd_new)
    render = commands.add_parser("render", help="write the site's Markdown pages to a folder")
    render.add_argument("--out", required=True, metavar="DIR")
    render.set_defaults(handler=cmd_render)
    requirements = commands.add_parser(
        "requirements", help="list the packages reproducers declare, one pin per line"
    )
    requirements.add_argument(
        "--device", choices=("cpu", "cuda", "multi-gpu", "all"), default="all",
        help="only entries for this device (default: all)",
    )
    requirements.set_defaults(handler=cmd_requirements)
    schema = commands.add_parser("schema", help="write the JSON Schemas for entry files")
    schema.add_argument("--check", action="store_true", help="fail if the files are stale")
    schema.set_defaults(handler=cmd_schema)
    verify = commands.add_parser(
        "verify",
        help="run reproducers both ways and record where they proved the failure",
        epilog=VERIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("ids", nargs="*", metavar="ID", help="entries to verify (default: all)")
    verify.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="cpu: CPU entries only; cuda: GPU entries only; auto: whatever this machine can "
        "run (default)",
    )
    verify.add_argument(
        "--jobs", type=_jobs, default=1, metavar="N", help="entries run in parallel (default: 1)"
    )
    verify.add_argument(
        "--since",
        metavar="GIT_REF",
        help="only entries whose folder changed since GIT_REF or in the working tree",
    )
    verify.add_argument("--json", action="store_true", help="print one JSON document")
    verify.add_argument(
        "--require-packages",
        action="store_true",
        help="fail when a reproducer is skipped for a missing package (for CI)",
    )
    verify.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        help="do not write verification/<id>.json",
    )
    verify.set_defaults(handler=cmd_verify)
    index = commands.add_parser(
        "index", help="write signatures.json and entries.json (what the wheel ships)"
    )
    index.add_argument("--out", required=True, metavar="DIR")
    index.set_defaults(handler=cmd_index)
    diagnose = commands.add_parser(
        "diagnose",
        help="find known failures in logs, the initiating one first",
        description="Read plain or gzip logs, folders of per-rank logs (torchrun --log-dir) "
        "or standard input ('-'), and report the catalog's failures found in them.",
        epilog="Exit codes: 0 a known failure was found; 1 none was; 2 an input could not "
        "be read or no signature index is available; 130 interrupted.",
    )
    diagnose.add_argument("paths", nargs="*", metavar="FILE|DIR|-")
    diagnose.add_argument("--json", action="store_true", help="print one JSON document")
    diagnose.add_argument(
        "--context", type=_context, default=3, metavar="N",
        help="lines shown before and after each first match (default: 3)",
    )
    diagnose.add_argument("--engine", choices=("hyperscan", "literal"), help=argparse.SUPPRESS)
    _index_options(diagnose)
    diagnose.set_defaults(handler=cmd_diagnose)
    explain = commands.add_parser("explain", help="print an entry in the terminal")
    explain.add_argument("id", metavar="ID")
    _index_options(explain)
    explain.set_defaults(handler=cmd_explain)
    return parser


def _context(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 50:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 50, not {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader (head, less) went away: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
