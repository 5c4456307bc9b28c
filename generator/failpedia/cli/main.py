"""The ``failpedia`` command: validate, scaffold, render, publish the schema, verify,
build the signature index, diagnose logs, run a command and diagnose its output, write
an issue report, explain an entry.

What each command does (``command_help``) and what its exit statuses mean
(``exit_codes``) are declared beside it, for ``--help`` and the README alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from failpedia.cli import arguments
from failpedia.cli.command_help import command_texts
from failpedia.cli.exit_codes import INTERRUPTED
from failpedia.signatures.line_rules import CONTEXT_LINES

# What ``failpedia diagnose --format`` can print; ``--json`` is ``--format json``.
DIAGNOSE_FORMATS = ("text", "json", "github", "gcc")


def _index_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--index", metavar="FILE", help="a signatures.json to use")
    command.add_argument(
        "--entries",
        metavar="DIR",
        help="compile the index from this entries folder (default: the project's, as "
        "--root finds it, or the installed index)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="failpedia", description="Failpedia: ML training failures, proved by reproducers."
    )
    parser.add_argument(
        "--root",
        help="project folder holding mkdocs.yml and its entries (default: the current "
        "folder's project, else the checkout this package runs from, else the index an "
        "installed wheel ships)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "validate", help="check every entry; report all problems", **command_texts("validate")
    ).set_defaults(handler=_validate)
    new = commands.add_parser(
        "new", help="scaffold entries/<category>/<id>/", **command_texts("new")
    )
    new.add_argument("target", metavar="CATEGORY/ID")
    new.add_argument(
        "--evidence",
        action="store_true",
        help="for a failure no script can trigger on demand: public reports instead of a "
        "reproducer (at most 15%% of the catalog; see CONTRIBUTING.md)",
    )
    new.set_defaults(handler=_new)
    render = commands.add_parser(
        "render", help="write the site's Markdown pages to a folder", **command_texts("render")
    )
    render.add_argument("--out", required=True, metavar="DIR")
    render.set_defaults(handler=_render)
    requirements = commands.add_parser(
        "requirements", help="list the pins reproducers declare", **command_texts("requirements")
    )
    requirements.add_argument(
        "--device",
        choices=("cpu", "cuda", "multi-gpu", "all"),
        default="all",
        help="only entries for this device (default: all)",
    )
    requirements.add_argument("--private", action="store_true", help="installed apart: PIN FOLDER")
    requirements.set_defaults(handler=_requirements)
    releases = commands.add_parser(
        "releases",
        help="check the signatures' release ranges against the pinned releases installed here",
        **command_texts("releases"),
    )
    releases.add_argument(
        "--list", action="store_true", help="print every range and why it holds or not"
    )
    releases.set_defaults(handler=_releases)
    schema = commands.add_parser(
        "schema", help="write the JSON Schemas for entry files", **command_texts("schema")
    )
    schema.add_argument("--check", action="store_true", help="fail if the files are stale")
    schema.set_defaults(handler=_schema)
    verify = commands.add_parser(
        "verify",
        help="run reproducers both ways and record where they proved the failure",
        **command_texts("verify"),
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
        "--jobs",
        type=arguments.at_least(1),
        default=1,
        metavar="N",
        help="entries run at once (default: 1)",
    )
    verify.add_argument(
        "--since",
        metavar="GIT_REF",
        help="only entries whose folder or record changed since GIT_REF or in the working "
        "tree (with --changed: added to its plan)",
    )
    verify.add_argument(
        "--changed",
        action="store_true",
        help="only entries their record does not prove as they are here (none; reproducer, "
        "pin or environment changed) and the day's share of the rest; prints why first",
    )
    verify.add_argument(
        "--rotation",
        type=arguments.at_least(0),
        metavar="N",
        help="with --changed: a share of 1/N a day, each in turn (default: 7; 0: none)",
    )
    verify.add_argument("--json", action="store_true", help="print one JSON document")
    verify.add_argument(
        "--require-packages",
        action="store_true",
        help="fail when a reproducer is skipped for a missing package (for CI)",
    )
    containment = verify.add_mutually_exclusive_group()
    containment.add_argument(
        "--require-containment",
        action="store_true",
        help="refuse to run reproducers unless bubblewrap can contain them (the default; "
        "kept so CI says so)",
    )
    containment.add_argument(
        "--unsafe-uncontained",
        action="store_true",
        help="where bubblewrap cannot contain reproducers, run them anyway with your "
        "user's rights: they can then read and write your files, reach the network and, "
        "as root, end every process of the machine; only for code you have read",
    )
    verify.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        help="do not write verification/<id>.json",
    )
    verify.add_argument(
        "--records",
        metavar="DIR",
        help="write records to DIR instead of the project's records folder (to copy them "
        "back from another machine)",
    )
    verify.add_argument(
        "--shard",
        type=arguments.shard,
        metavar="I/N",
        help="only the I-th of N stable shares of the selected entries (1 <= I <= N), so N "
        "machines can split a catalog; an entry stays in its share as others are added",
    )
    verify.set_defaults(handler=_verify)
    merge = commands.add_parser(
        "merge-records",
        help="add records made elsewhere (verify --records DIR) to the project's records",
        **command_texts("merge-records"),
    )
    merge.add_argument("source", metavar="DIR", help="a folder of records (<id>.json)")
    merge.add_argument(
        "destination",
        nargs="?",
        metavar="DEST",
        help="the records folder to update (default: the project's, verification/)",
    )
    merge.set_defaults(handler=_merge_records)
    index = commands.add_parser(
        "index",
        help="write signatures.json, entries.json and nearest.json (what the wheel ships)",
        **command_texts("index"),
    )
    index.add_argument("--out", required=True, metavar="DIR")
    index.set_defaults(handler=_index)
    diagnose = commands.add_parser(
        "diagnose",
        help="find known failures in logs, the initiating one first",
        **command_texts("diagnose"),
    )
    diagnose.add_argument("paths", nargs="*", metavar="FILE|DIR|-")
    diagnose.add_argument(
        "--format",
        choices=DIAGNOSE_FORMATS,
        default="text",
        help="text for people (default); json, one document for programs; github, a "
        "GitHub Actions workflow command (::error file=...,line=...::) per finding, which "
        "annotates the job; gcc, a 'file:line: error: ...' line per finding, what editors' "
        "problem matchers read (editors/vscode/tasks.json)",
    )
    diagnose.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="the same as --format json",
    )
    diagnose.add_argument(
        "--brief",
        action="store_true",
        help="leave out each finding's quick answer (title, link and first line only)",
    )
    diagnose.add_argument(
        "--context",
        type=arguments.context_lines,
        default=CONTEXT_LINES,
        metavar="N",
        help=f"lines shown before and after each first match (default: {CONTEXT_LINES})",
    )
    diagnose.add_argument("--engine", choices=("hyperscan", "literal"), help=argparse.SUPPRESS)
    _index_options(diagnose)
    diagnose.set_defaults(handler=_diagnose)
    run = commands.add_parser(
        "run",
        help="run a training command, pass its output through, diagnose it as it streams",
        usage="failpedia run [-h] [--context N] [--json FILE] [--spool DIR] [--spool-cap SIZE] "
        "-- CMD [ARG ...]",
        **command_texts("run"),
    )
    run.add_argument(
        "--context",
        type=arguments.context_lines,
        default=CONTEXT_LINES,
        metavar="N",
        help=f"lines shown before and after each first match (default: {CONTEXT_LINES})",
    )
    run.add_argument("--json", metavar="FILE", help="also write the diagnosis as JSON to FILE")
    run.add_argument(
        "--spool",
        metavar="DIR",
        help="where output waits until it is matched, when the command prints faster than "
        "it can be (default: the temporary folder, as TMPDIR sets it)",
    )
    run.add_argument(
        "--spool-cap",
        type=arguments.size,
        metavar="SIZE",
        help="the most output that may wait in the spool (default: 1G, and at most a tenth "
        "of the free space there); output past it is passed through but not matched",
    )
    run.add_argument("--engine", choices=("hyperscan", "literal"), help=argparse.SUPPRESS)
    _index_options(run)
    run.add_argument("command", nargs=argparse.REMAINDER, metavar="CMD", help=argparse.SUPPRESS)
    run.set_defaults(handler=_run)
    report = commands.add_parser(
        "report",
        help="write a Markdown issue body for a failure (diagnosis, environment, redacted)",
        **command_texts("report"),
    )
    report.add_argument("paths", nargs="*", metavar="LOG")
    report.add_argument(
        "--context",
        type=arguments.context_lines,
        default=CONTEXT_LINES,
        metavar="N",
        help=f"lines shown before and after each line (default: {CONTEXT_LINES})",
    )
    report.add_argument(
        "--python",
        default=sys.executable,
        metavar="PATH",
        help="the interpreter whose environment to describe: the one that ran the training "
        "(default: this one)",
    )
    _index_options(report)
    report.set_defaults(handler=_report)
    explain = commands.add_parser(
        "explain", help="print an entry in the terminal", **command_texts("explain")
    )
    explain.add_argument("id", metavar="ID|MESSAGE")
    _index_options(explain)
    explain.set_defaults(handler=_explain)
    docs = commands.add_parser(
        "docs", help="write the documents' generated tables", **command_texts("docs")
    )
    docs.add_argument(
        "--check", action="store_true", help="name each region out of date instead of writing"
    )
    docs.set_defaults(handler=_docs)
    return parser


# Each command imports its module only when it runs: a command group imports what its
# commands need, and `diagnose` (timed against grep) should not pay for YAML, templates
# or the runner.
def _validate(args: argparse.Namespace) -> int:
    from failpedia.cli.catalog_commands import cmd_validate

    return cmd_validate(args)


def _new(args: argparse.Namespace) -> int:
    from failpedia.cli.catalog_commands import cmd_new

    return cmd_new(args)


def _render(args: argparse.Namespace) -> int:
    from failpedia.cli.catalog_commands import cmd_render

    return cmd_render(args)


def _requirements(args: argparse.Namespace) -> int:
    from failpedia.cli.catalog_commands import cmd_requirements

    return cmd_requirements(args)


def _releases(args: argparse.Namespace) -> int:
    from failpedia.cli.releases_command import cmd_releases

    return cmd_releases(args)


def _schema(args: argparse.Namespace) -> int:
    from failpedia.cli.catalog_commands import cmd_schema

    return cmd_schema(args)


def _index(args: argparse.Namespace) -> int:
    from failpedia.cli.catalog_commands import cmd_index

    return cmd_index(args)


def _verify(args: argparse.Namespace) -> int:
    from failpedia.cli.verify_command import cmd_verify

    return cmd_verify(args)


def _merge_records(args: argparse.Namespace) -> int:
    from failpedia.cli.verify_command import cmd_merge_records

    return cmd_merge_records(args)


def _diagnose(args: argparse.Namespace) -> int:
    from failpedia.cli.logs_commands import cmd_diagnose

    return cmd_diagnose(args)


def _run(args: argparse.Namespace) -> int:
    from failpedia.cli.run_command import cmd_run

    return cmd_run(args)


def _report(args: argparse.Namespace) -> int:
    from failpedia.cli.report_command import cmd_report

    return cmd_report(args)


def _explain(args: argparse.Namespace) -> int:
    from failpedia.cli.logs_commands import cmd_explain

    return cmd_explain(args)


def _docs(args: argparse.Namespace) -> int:
    from failpedia.cli.docs_command import cmd_docs

    return cmd_docs(args, build_parser())


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:  # the reader (head, less) went away: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
