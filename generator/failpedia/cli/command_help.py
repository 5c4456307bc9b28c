"""What each command does, in the words ``failpedia COMMAND --help`` prints: the parser
(``main``) gives each command its ``description`` and ``epilog`` from here, and the
README's command table is written from the parser (``failpedia docs``), so the two say
the same."""

from __future__ import annotations

import argparse
from typing import Any

from failpedia.cli.exit_codes import epilog

DESCRIPTIONS: dict[str, str] = {
    "validate": "Check every entry and its verification record and report all problems as "
    "`path:line: field: message`; exit 1 if any. Entries come from strangers: raw HTML, "
    "links off the web, external images, special files and reserved ids are refused (see "
    "CONTRIBUTING.md).",
    "new": "Scaffold an entry folder, `entries/<category>/<id>/` with `entry.yaml` and "
    "`repro.py`; validation then names each field left to fill.",
    "render": "Write the site's Markdown pages to a folder (the same function the site "
    "build uses).",
    "requirements": "List the packages reproducers declare, for `pip install`; with "
    "`--private`, those installed apart (`PIN FOLDER` lines, for `pip install --no-deps "
    "--target FOLDER PIN`).",
    "releases": "Check each signature's `releases` ranges against the releases installed "
    "here (torch and the pins of `failpedia requirements`, which must be installed): a pin "
    "that changes a wording fails it until the entry says so.",
    "schema": "Write (or, with `--check`, check) the JSON Schemas of the entry files "
    "(`entries/entry.schema.json` and those of the registries) from the model.",
    "verify": "Run reproducers both ways, contained in bubblewrap where it works (no "
    "network, read-only filesystem, private `/tmp`, limits), confirm fixed mode ran its "
    "check region to the end, and record where they proved the failure in "
    "`verification/`; where bubblewrap cannot contain them, refuse to run them unless "
    "`--unsafe-uncontained`.",
    "merge-records": "Add records made on another machine (`verify --records DIR`, "
    "`scripts/verify-gpu.sh DIR`) to the project's records, `verification/`.",
    "index": "Write `signatures.json` (with the old ids of renamed and merged entries), "
    "`entries.json` and `nearest.json`: what the wheel ships.",
    "diagnose": "Find known failures in logs (plain, gzip, standard input as `-`, folders "
    "of per-rank logs such as `torchrun --log-dir`), the initiating one first, each with "
    "its entry's quick answer; `--format json` for programs, `github` for GitHub Actions "
    "annotations and `gcc` for editors' problem lists, one line per finding at the line it "
    "matched (editors/README.md).",
    "run": "Run a training command (a script, `torchrun`, `accelerate launch`, `srun`) with "
    "its output passed through unchanged and live (a terminal stays a terminal), match "
    "every line as `diagnose` does, and print the diagnosis with each entry's quick answer "
    "to stderr when it ends. SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGALRM are "
    "passed to the command's process group.",
    "report": "Print a Markdown issue body for a failure from its logs (plain, gzip, "
    "folders, or standard input): the diagnosis, or the most error-like lines with their "
    "context when none matched; the environment (Python, OS, torch, CUDA, NCCL, GPU, "
    "driver, packages); and the `failpedia new` line that starts its entry. Home folders "
    "and what looks like a token are redacted. A link to the issue form goes to stderr.",
    "explain": "Print an entry in the terminal, by its id or by a pasted message its "
    'signature matches (`failpedia explain "CUDA error: device-side assert triggered"`); '
    "the old id of a renamed or merged entry prints the entry that took its place.",
    "docs": "Write the regions of README.md and CONTRIBUTING.md generated from the "
    "interface (the command table and exit codes from this parser, the entry's fields from "
    "the model, the package's parts from their declarations); with `--check`, name each "
    "region out of date instead, as CI does.",
}

# What ``failpedia verify --help`` adds before its exit codes: how reproducers run.
VERIFY_DETAILS = """\
Runs each selected entry's reproducer twice, in a fresh subprocess with a clean
environment and the entry's time limit: `python repro.py` must print a line matching one
of the entry's signatures; `python repro.py --fixed` must exit 0 and print none.
Verdicts: proved, not-reproduced, fix-failed, timed-out, harness-error, skipped.
Records go to verification/<id>.json (newest result per environment) unless --no-record.

Reproducers are code from pull requests. They run contained in bubblewrap (bwrap):
read-only filesystem, private /tmp and /dev/shm with a size limit, no network unless the
entry declares it, an unprivileged user, process and memory limits, a private process
tree that dies with the run. Where bubblewrap cannot contain them, verify refuses to run
them unless --unsafe-uncontained is given. The first line on stderr says how they run.
"""


class ParagraphFormatter(argparse.HelpFormatter):
    """Wraps each paragraph of a description or an epilog to the terminal, as argparse
    wraps one, keeping the blank lines between them; only when help is printed, so
    building the parser (every command's start-up) wraps nothing."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join(
            super(ParagraphFormatter, self)._fill_text(paragraph, width, indent)
            for paragraph in text.split("\n\n")
        )


def command_texts(command: str) -> dict[str, Any]:
    """``description``, ``epilog`` and the formatter for ``add_parser(command, ...)``."""
    details = VERIFY_DETAILS + "\n" if command == "verify" else ""
    return {
        "description": DESCRIPTIONS[command],
        "epilog": details + epilog(command),
        "formatter_class": ParagraphFormatter,
    }
