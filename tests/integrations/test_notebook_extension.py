"""``%load_ext failpedia`` in a real Jupyter kernel: a cell that dies of a catalogued error
keeps its error output exactly, still fails, and the entry is rendered under it."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from hook_helpers import MATMUL, entry_url_and_summary

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.slow  # two kernels, each importing torch

FAILING_CELL = "import torch\nlayer = torch.nn.Linear(4, 2)\nlayer(torch.ones(8, 3))"


def execute(first_cell: str) -> tuple[list[dict[str, Any]], BaseException | None]:
    """Run ``first_cell``, then the failing cell, in a fresh kernel, as "Run all" does
    (stopping at the first error); the failing cell's outputs and what stopped the run."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(first_cell),
        nbformat.v4.new_code_cell(FAILING_CELL),
    ]
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=180)
    stopped: BaseException | None = None
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        stopped = error
    return notebook.cells[1].outputs, stopped


def test_the_cell_fails_as_before_and_the_entry_is_rendered_under_it() -> None:
    plain_outputs, plain_stop = execute("import failpedia")
    outputs, stop = execute("%load_ext failpedia")
    # The cell fails as it did: the run stops there, with the same error output.
    assert plain_stop is not None and stop is not None
    errors = [item for item in outputs if item["output_type"] == "error"]
    assert errors == [item for item in plain_outputs if item["output_type"] == "error"]
    assert errors[0]["ename"] == "RuntimeError"
    assert errors[0]["evalue"] == "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x2)"
    # Under it, the finding: plain text as a script prints it, and HTML with the link.
    kinds = [item["output_type"] for item in outputs]
    displayed = [item for item in outputs if item["output_type"] == "display_data"]
    assert len(displayed) == 1, kinds
    assert kinds.index("error") < kinds.index("display_data")
    data = displayed[0]["data"]
    url, summary = entry_url_and_summary(MATMUL)
    text = data["text/plain"]
    assert text.startswith("failpedia: 1 known failure in this exception;")
    assert f"{MATMUL} (initiates the failure): {url}" in text
    assert summary in " ".join(text.split())
    page = data["text/html"]
    assert f'<a href="{url}" target="_blank">{url}</a>' in page
    # The HTML is the text, escaped: nothing more, nothing less.
    assert html.unescape(re.sub(r"<[^>]+>", "", page)) == text
