"""Reproducer for hf-trainer-no-valid-checkpoint.

`python repro.py`: a Trainer run saves a checkpoint every 2 steps into `output/` and is
stopped after step 2 of 4 (here by a callback, in life by a time limit or a crash), leaving
`output/checkpoint-2/`. The restart passes the run's output folder,
`trainer.train(resume_from_checkpoint="output")`, as many launch scripts do: that folder
holds no weights file, only `checkpoint-N` folders, so `Trainer._load_from_checkpoint`
raises `ValueError: Can't find a valid checkpoint at output`.
`python repro.py --fixed`: the restart passes the newest `checkpoint-N` folder, which
`transformers.trainer_utils.get_last_checkpoint("output")` finds (what
`resume_from_checkpoint=True` does too). The check compares the resumed run with one
that was never stopped: same final step, same weights.

Everything is built in the script: a two-layer regression model and 32 random samples, on
the CPU, in a temporary folder. Nothing is downloaded.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from torch import nn  # noqa: E402
from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402
from transformers.trainer_utils import get_last_checkpoint  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]


class Regressor(nn.Module):
    """A small model that returns its loss, as Trainer expects."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"loss": nn.functional.mse_loss(self.net(x).squeeze(-1), labels)}


class CountSteps(TrainerCallback):
    """Counts the optimizer steps a run takes itself."""

    def __init__(self) -> None:
        self.steps = 0

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        self.steps += 1
        return control


class StopAfter(TrainerCallback):
    """Stops the run after a step, as a killed job would, once its checkpoint is saved."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if state.global_step == self.step:
            control.should_training_stop = True
        return control


generator = torch.Generator().manual_seed(0)
samples = [{"x": torch.randn(8, generator=generator), "labels": torch.randn((), generator=generator)} for _ in range(32)]


def make_trainer(output_dir: str, callbacks: list[TrainerCallback]) -> Trainer:
    """The same model, data and arguments for every run; the weights start from seed 0."""
    torch.manual_seed(0)
    args = TrainingArguments(
        output_dir=output_dir,
        max_steps=4,
        per_device_train_batch_size=8,
        learning_rate=0.05,
        save_strategy="steps",
        save_steps=2,
        logging_strategy="no",
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    return Trainer(model=Regressor(), args=args, train_dataset=samples, callbacks=callbacks)


with tempfile.TemporaryDirectory(prefix="repro-trainer-") as workdir:
    os.chdir(workdir)  # the job's folder: the run saves to ./output, as a recipe would
    output_dir = "output"
    make_trainer(output_dir, [StopAfter(2)]).train()  # the run that was stopped
    print("output folder:", sorted(os.listdir(output_dir)))

    resume_from = output_dir  # what the restart script passes
    if FIXED:
        # --- fix: start
        # Resume from the newest checkpoint-N folder inside the output folder.
        resume_from = get_last_checkpoint(output_dir)
        # --- fix: end
    print("resuming from:", resume_from)
    counter = CountSteps()
    resumed = make_trainer(output_dir, [counter])
    resumed.train(resume_from_checkpoint=resume_from)

    # --- check: start
    # The restart took up the saved state (it ran only the 2 steps left) and ends where a run
    # that was never stopped ends: same step, same weights.
    reference = make_trainer("reference", [])
    reference.train()
    assert resumed.state.global_step == reference.state.global_step == 4, resumed.state.global_step
    got, want = resumed.model.state_dict(), reference.model.state_dict()
    assert counter.steps == 2, f"the restart ran {counter.steps} steps, not the 2 left after checkpoint-2"
    assert got.keys() == want.keys()
    for name, value in want.items():
        torch.testing.assert_close(got[name], value)
    print(f"check: resumed run ran steps 3-4 and reached step {resumed.state.global_step} with the uninterrupted run's weights")
    # --- check: end
