"""Reproducer for deepspeed-config-mismatch-trainer.

A fine-tuning script trains with transformers' `Trainer` and DeepSpeed. Its DeepSpeed
config was copied from another run and states fixed values (`train_micro_batch_size_per_gpu:
8`, `optimizer.params.lr: 1e-3`), while the command line asks for
`per_device_train_batch_size=4` and `learning_rate=0.05`. The run is one rank of a
DeepSpeed job on the CPU (DeepSpeed's CPU accelerator, gloo), so the real integration
and engine run.

`python repro.py`: when training starts, `deepspeed_init` completes the config from the
`TrainingArguments` and finds values that disagree, and raises `ValueError: Please correct
the following DeepSpeed config values that mismatch TrainingArguments values:` with one
line per key (`- ds train_micro_batch_size_per_gpu=8 vs hf per_device_train_batch_size=4`,
...).
`python repro.py --fixed`: the config says `"auto"` for every value the Trainer also
sets, so transformers fills them from the `TrainingArguments`. The check: the engine's
effective micro batch, accumulation and learning rate are the intended ones, and the
weights after 4 steps equal the same SGD steps computed by hand in plain PyTorch.
"""

import os
import socket
import sys
import tempfile

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# One rank of a `deepspeed` / `torchrun` launch.
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")

import torch  # noqa: E402
from torch import nn  # noqa: E402
from transformers import Trainer, TrainingArguments  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
BATCH, LR, STEPS = 4, 0.05, 4


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(3, 1)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict:
        prediction = self.linear(x).squeeze(-1)
        return {"loss": nn.functional.mse_loss(prediction, labels)}


class Rows(torch.utils.data.Dataset):
    def __init__(self) -> None:
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(BATCH, 3, generator=g)  # one batch: every step sees all rows
        self.y = self.x @ torch.tensor([1.0, -2.0, 0.5])

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict:
        return {"x": self.x[i], "labels": self.y[i]}


# The config as copied from another run: fixed values that disagree with this run's arguments.
ds_config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "optimizer": {"type": "SGD", "params": {"lr": 1e-3}},
    "zero_optimization": {"stage": 0},
}
if FIXED:
    # --- fix: start
    # Let the Trainer's arguments decide every value they also set.
    ds_config = {
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "optimizer": {"type": "SGD", "params": {"lr": "auto"}},
        "zero_optimization": {"stage": 0},
    }
    # --- fix: end

with tempfile.TemporaryDirectory(prefix="repro-ds-mismatch-") as workdir:
    args = TrainingArguments(
        output_dir=workdir,
        deepspeed=ds_config,
        per_device_train_batch_size=BATCH,
        gradient_accumulation_steps=1,
        learning_rate=LR,
        lr_scheduler_type="constant",
        max_steps=STEPS,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    data = Rows()
    trainer = Trainer(model=Regressor(), args=args, train_dataset=data)
    trainer.train()

    # --- check: start
    engine = trainer.model_wrapped
    assert engine.train_micro_batch_size_per_gpu() == BATCH, engine.train_micro_batch_size_per_gpu()
    assert engine.gradient_accumulation_steps() == 1, engine.gradient_accumulation_steps()
    assert engine.get_lr() == [LR], engine.get_lr()
    # Reference: the same full-batch SGD steps in plain PyTorch, gradients clipped to
    # the arguments' max_grad_norm as the run does.
    reference = Regressor()
    for _ in range(STEPS):
        reference.zero_grad()
        nn.functional.mse_loss(reference.linear(data.x).squeeze(-1), data.y).backward()
        nn.utils.clip_grad_norm_(reference.parameters(), args.max_grad_norm)
        with torch.no_grad():
            for parameter in reference.parameters():
                parameter -= LR * parameter.grad
    trained = dict(trainer.model.named_parameters())
    for name, value in reference.named_parameters():
        torch.testing.assert_close(trained[name].detach(), value.detach(), rtol=1e-5, atol=1e-6)
    print(f"check: micro batch {BATCH}, lr {LR}, and the weights after {STEPS} steps equal the hand-computed SGD steps")
    # --- check: end
