"""``failpedia run -- CMD ...``: the command line of the wrapped run (``wrap``).

The exit status is the command's (128 + n when signal n killed it; 127 when it could not
be found, 126 when it could not be run; 2 for our own bad usage, found before it starts:
no command, a ``--json`` file that cannot be written, no signature index).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from failpedia.cli.exit_codes import USAGE
from failpedia.cli.logs_commands import index_source_of
from failpedia.project import index_source
from failpedia.signatures.index_format import IndexUnavailable
from failpedia.wrap.wrapped_run import RunOptions, check_json_target, run_wrapped


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("failpedia run: give the command to run after --", file=sys.stderr)
        return USAGE
    json_path = Path(args.json) if args.json else None
    if json_path is not None:
        problem = check_json_target(json_path)
        if problem:
            print(f"failpedia run: {problem}", file=sys.stderr)
            return USAGE
    try:
        source = index_source_of(args)
        open_index = index_source.index_opener(source)
    except IndexUnavailable as error:
        print(f"failpedia run: {error}", file=sys.stderr)
        return USAGE
    options = RunOptions(
        context=args.context,
        engine=args.engine,
        json_path=json_path,
        spool=Path(args.spool) if args.spool else None,
        spool_cap=args.spool_cap,
    )
    add_nearest = functools.partial(index_source.with_nearest, source=source)
    return run_wrapped(command, open_index, add_nearest, options)
