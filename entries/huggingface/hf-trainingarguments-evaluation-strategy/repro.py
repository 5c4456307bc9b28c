"""Reproducer for hf-trainingarguments-evaluation-strategy.

`python repro.py`: a training script written for transformers 4.x asks for an evaluation
every 2 steps with `evaluation_strategy="steps", eval_steps=2`. transformers 4.41 renamed
the argument to `eval_strategy` (a `FutureWarning` until 4.50.3) and 4.51.0 removed the old
name, so on the pinned 5.23.0 `TrainingArguments` has no such field and the dataclass'
`__init__` raises `TypeError: TrainingArguments.__init__() got an unexpected keyword
argument 'evaluation_strategy'` before anything runs.
`python repro.py --fixed`: the same settings under the new name, `eval_strategy`. The
check confirms the arguments hold the intended schedule (`steps`, every 2 steps) and that
a 6-step `Trainer` run evaluates at steps 2, 4 and 6, each time on all 8 validation rows.

Everything is built in the script (a linear model, 16 training and 8 validation rows);
nothing is downloaded, and the run uses the CPU.
"""

import sys
import tempfile

import torch
from torch import nn
from transformers import Trainer, TrainingArguments

FIXED = "--fixed" in sys.argv[1:]

# The schedule the script means: evaluate every 2 optimizer steps, 6 steps in all.
EVAL_EVERY, MAX_STEPS = 2, 6


# How many rows each evaluation pass saw, counted by the model itself.
evaluated_rows: list[int] = []


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict:
        if not self.training:
            evaluated_rows.append(len(x))
        prediction = self.linear(x).squeeze(-1)
        return {"loss": nn.functional.mse_loss(prediction, labels), "logits": prediction}


class Rows(torch.utils.data.Dataset):
    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict:
        return {"x": self.x[i], "labels": self.y[i]}


generator = torch.Generator().manual_seed(0)
slope = torch.tensor([1.0, -2.0, 3.0, -4.0])
x_train, x_val = torch.randn(16, 4, generator=generator), torch.randn(8, 4, generator=generator)
train, val = Rows(x_train, x_train @ slope), Rows(x_val, x_val @ slope)

# The evaluation settings as a transformers 4.40 script writes them.
schedule = {"evaluation_strategy": "steps", "eval_steps": EVAL_EVERY}
if FIXED:
    # --- fix: start
    schedule = {"eval_strategy": "steps", "eval_steps": EVAL_EVERY}  # the name since transformers 4.41
    # --- fix: end

with tempfile.TemporaryDirectory(prefix="repro-eval-strategy-") as output_dir:
    args = TrainingArguments(
        output_dir=output_dir,
        **schedule,
        max_steps=MAX_STEPS,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        learning_rate=0.05,
        save_strategy="no",
        use_cpu=True,
        report_to="none",
        disable_tqdm=True,
    )
    print("eval_strategy:", args.eval_strategy, "eval_steps:", args.eval_steps)
    trainer = Trainer(model=Regressor(), args=args, train_dataset=train, eval_dataset=val)
    trainer.train()

    # --- check: start
    # The arguments hold the schedule the script asked for...
    assert args.eval_strategy == "steps", args.eval_strategy
    assert args.eval_steps == EVAL_EVERY, args.eval_steps
    # ...and training evaluated at exactly those steps, each time on every validation row.
    eval_at = [entry["step"] for entry in trainer.state.log_history if "eval_loss" in entry]
    intended = list(range(EVAL_EVERY, MAX_STEPS + 1, EVAL_EVERY))
    assert eval_at == intended, f"evaluated at steps {eval_at}, intended {intended}"
    assert sum(evaluated_rows) == len(val) * len(intended), evaluated_rows
    print(f"check: evaluated at steps {eval_at}, {len(val)} validation rows each time")
    # --- check: end
