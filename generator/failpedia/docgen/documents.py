"""Which region of which document is written from what: the one list ``failpedia docs``
writes and checks."""

from __future__ import annotations

import argparse
from pathlib import Path

from failpedia.catalog.model import Entry
from failpedia.docgen.commands import ExitCodes, command_table, exit_code_text
from failpedia.docgen.fields import field_table
from failpedia.docgen.layering import layering_table, read_parts
from failpedia.docgen.regions import Region

# The package whose parts the layering table describes: the one running.
PACKAGE = Path(__file__).resolve().parents[1]


def project_regions(
    parser: argparse.ArgumentParser, exit_codes: ExitCodes, package: Path = PACKAGE
) -> list[Region]:
    """Every generated region, with its text as the interface says it now."""
    return [
        Region(
            "README.md",
            "commands",
            "the parser (cli/main.py)",
            command_table(parser),
        ),
        Region(
            "README.md",
            "exit codes",
            "the exit codes the commands declare (cli/exit_codes.py)",
            exit_code_text(parser, exit_codes),
        ),
        Region(
            "CONTRIBUTING.md",
            "entry fields",
            "the entry model (catalog/model.py)",
            field_table(Entry),
        ),
        Region(
            "CONTRIBUTING.md",
            "layering",
            "the parts' declarations (each __init__.py: its docstring and MAY_IMPORT)",
            layering_table(read_parts(package)),
        ),
    ]
