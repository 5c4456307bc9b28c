"""Reproducer for hf-trainer-best-model-strategy.

`python repro.py`: a regression model is fine-tuned with `Trainer`, evaluated every epoch
(`eval_strategy="epoch"`), and asked to end on its best checkpoint
(`load_best_model_at_end=True`). `save_strategy` is left at its default, `"steps"` (every
500 steps), so checkpoints would not be written when evaluations happen, and
`TrainingArguments` refuses the combination: `ValueError: --load_best_model_at_end requires
the save and eval strategy to match, except when --save_strategy="best", but found`.
`python repro.py --fixed`: `save_strategy="epoch"`, the same schedule as the evaluations,
so every evaluated model is on disk. Five epochs run; the validation loss bottoms out at
epoch 3 and rises after. The check confirms that the model in memory at the end is the
epoch with the lowest validation loss, weight for weight the checkpoint saved then.

Everything is built in the script (a linear model, 16 training and 16 validation rows);
nothing is downloaded, and the run uses the CPU.
"""

import os
import sys
import tempfile

import torch
from safetensors.torch import load_file
from torch import nn
from transformers import Trainer, TrainingArguments

FIXED = "--fixed" in sys.argv[1:]


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 1)
        nn.init.zeros_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict:
        prediction = self.linear(x).squeeze(-1)
        return {"loss": nn.functional.mse_loss(prediction, labels), "logits": prediction}


class Rows(torch.utils.data.Dataset):
    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict:
        return {"x": self.x[i], "labels": self.y[i]}


# The validation targets follow a different slope than the training ones, so the
# validation loss falls, reaches its lowest point, then rises as training goes on.
generator = torch.Generator().manual_seed(0)
slope = torch.tensor([2.0, -2.0, 2.0, -2.0])
x_train, x_val = torch.randn(16, 4, generator=generator), torch.randn(16, 4, generator=generator)
train, val = Rows(x_train, x_train @ slope), Rows(x_val, x_val @ (slope / 2))

save_strategy = "steps"  # the default: a checkpoint every `save_steps` (500) steps
if FIXED:
    # --- fix: start
    save_strategy = "epoch"  # the same schedule as eval_strategy: a checkpoint at every evaluation
    # --- fix: end

with tempfile.TemporaryDirectory(prefix="repro-best-model-") as output_dir:
    args = TrainingArguments(
        output_dir=output_dir,
        eval_strategy="epoch",
        save_strategy=save_strategy,
        load_best_model_at_end=True,
        metric_for_best_model="eval_loss",
        num_train_epochs=5,
        per_device_train_batch_size=8,
        optim="sgd",
        learning_rate=0.5,
        lr_scheduler_type="constant",
        use_cpu=True,
        report_to="none",
        disable_tqdm=True,
    )
    model = Regressor()
    trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=val)
    trainer.train()
    print("best checkpoint:", os.path.basename(trainer.state.best_model_checkpoint))

    # --- check: start
    val_losses = [entry["eval_loss"] for entry in trainer.state.log_history if "eval_loss" in entry]
    best_epoch = val_losses.index(min(val_losses))
    assert len(val_losses) == 5 and min(val_losses) < val_losses[-1], "the last epoch should not be the best"
    # The model in memory at the end is the best epoch's, not the last one's...
    saved = load_file(os.path.join(trainer.state.best_model_checkpoint, "model.safetensors"))
    torch.testing.assert_close(model.state_dict(), saved)
    # ...and evaluating it again gives that epoch's validation loss.
    torch.testing.assert_close(trainer.evaluate()["eval_loss"], val_losses[best_epoch])
    print(f"check: the final model is epoch {best_epoch + 1}'s, the lowest of {len(val_losses)} validation losses")
    # --- check: end
