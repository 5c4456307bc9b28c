"""The callbacks for the Hugging Face ``Trainer`` and Lightning: a tiny CPU model whose
training step dies of a catalogued error gets the entry printed, on rank 0, from a script
that never imports ``failpedia.hook``; another rank prints nothing unless asked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hook_helpers import MATMUL, entry_url_and_summary

pytestmark = pytest.mark.slow  # each imports torch and a trainer in a fresh interpreter

HF_SCRIPT = """
import sys
import torch
from transformers import Trainer, TrainingArguments
from failpedia.integrations.hf_trainer import FailpediaCallback


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 2)  # sized for 4 features; the data has 3

    def forward(self, features, labels):
        logits = self.layer(features)
        return {"loss": torch.nn.functional.cross_entropy(logits, labels)}


data = [{"features": torch.ones(3), "labels": torch.tensor(0)} for _ in range(4)]
args = TrainingArguments(
    output_dir=sys.argv[1], max_steps=1, per_device_train_batch_size=2, report_to=[],
    use_cpu=True, save_strategy="no", logging_strategy="no", disable_tqdm=True,
)
trainer = Trainer(Head(), args, train_dataset=data, callbacks=[FailpediaCallback()])
trainer.train()
"""

LIGHTNING_SCRIPT = """
import sys
import torch
import lightning.pytorch as pl
from failpedia.integrations.lightning import FailpediaCallback


class Head(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 2)  # sized for 4 features; the data has 3

    def training_step(self, batch, index):
        features, labels = batch
        return torch.nn.functional.cross_entropy(self.layer(features), labels)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


data = torch.utils.data.TensorDataset(torch.ones(4, 3), torch.zeros(4, dtype=torch.long))
trainer = pl.Trainer(
    max_steps=1, accelerator="cpu", logger=False, enable_checkpointing=False,
    enable_progress_bar=False, enable_model_summary=False, default_root_dir=sys.argv[1],
    callbacks=[FailpediaCallback()],
)
trainer.fit(Head(), torch.utils.data.DataLoader(data, batch_size=2))
"""

ERROR = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)"


def run_script(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(script), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(path), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )


def finding_lines(stderr: str) -> str:
    """What failpedia printed, from its first line on."""
    start = stderr.index("failpedia: 1 known failure in this exception")
    return stderr[start:]


def test_a_trainer_step_that_raises_gets_its_entry_under_the_traceback(tmp_path: Path) -> None:
    done = run_script(tmp_path, HF_SCRIPT)
    assert done.returncode == 1
    url, summary = entry_url_and_summary(MATMUL)
    # The traceback, whole, then the finding.
    traceback_end = done.stderr.index(ERROR + "\n")
    assert done.stderr.rindex("Traceback (most recent call last):") < traceback_end
    report = finding_lines(done.stderr)
    assert done.stderr.index(report) > traceback_end
    assert f"{MATMUL} (initiates the failure): {url}" in report
    assert summary in " ".join(report.split())
    assert report.count("known failure") == 1


def test_the_trainer_callback_arms_nothing_on_another_rank(tmp_path: Path) -> None:
    """On a rank other than 0 the callback arms nothing, unless ``all_ranks``."""
    script = """
    import sys
    import torch
    from transformers import TrainerState
    from failpedia.integrations.hf_trainer import FailpediaCallback

    FailpediaCallback(all_ranks=sys.argv[2] == "all").on_train_begin(
        None, TrainerState(is_world_process_zero=False), None
    )
    torch.nn.Linear(4, 2)(torch.ones(2, 3))
    """
    path = tmp_path / "rank.py"
    path.write_text(textwrap.dedent(script), encoding="utf-8")
    said = {}
    for ranks in ("zero", "all"):
        done = subprocess.run(
            [sys.executable, str(path), str(tmp_path), ranks],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 1
        assert ERROR in done.stderr
        said[ranks] = f"{MATMUL} (initiates the failure)" in done.stderr
        assert ("failpedia" in done.stderr) == said[ranks]
    assert said == {"zero": False, "all": True}


def test_a_lightning_fit_that_raises_gets_its_entry_from_inside_the_trainer(
    tmp_path: Path,
) -> None:
    done = run_script(tmp_path, LIGHTNING_SCRIPT)
    assert done.returncode == 1
    url, summary = entry_url_and_summary(MATMUL)
    # Printed when the trainer catches it, before raising it on: the traceback follows,
    # whole, and the exception is not reported twice.
    report = finding_lines(done.stderr)
    assert f"{MATMUL} (initiates the failure): {url}" in report
    assert summary in " ".join(report.split())
    assert done.stderr.count("known failure") == 1
    assert done.stderr.rstrip().endswith(ERROR)
    assert done.stderr.index("Traceback (most recent call last):") > done.stderr.index(
        "known failure"
    )


@pytest.mark.parametrize("rank", [0, 1])
def test_the_lightning_callback_prints_on_rank_0_only(
    rank: int, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from types import SimpleNamespace

    from failpedia.integrations.lightning import FailpediaCallback

    try:
        torch.nn.Linear(4, 2)(torch.ones(2, 3))
    except RuntimeError as error:
        FailpediaCallback().on_exception(SimpleNamespace(global_rank=rank), None, error)
    said = capsys.readouterr().err
    assert (f"{MATMUL} (initiates the failure)" in said) == (rank == 0), said
