"""Reproducer for hf-bf16-unsupported.

`python repro.py`: a fine-tuning script asks the `Trainer` for bf16 mixed precision
(`bf16=True`, as `--bf16` on the command line) and runs on a machine where torch sees no
GPU that does bf16 (this CPU runner; a T4 or V100 is treated the same way).
`TrainingArguments.__post_init__` checks `is_torch_bf16_gpu_available()` and refuses:
`ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want
to train the model on CPU.` (transformers 5.23.0; on a machine with an older CUDA GPU it
adds ` You need Ampere+ GPU with cuda>=11.0`).
`python repro.py --fixed`: the run says where it trains, `use_cpu=True`, as the message
asks, and keeps bf16 autocast, which the CPU runs. The check confirms that training ran in
bf16 mixed precision on the CPU and that its loss at each of the 5 steps equals, within
bf16 rounding, the loss of the same model trained in fp32 by a plain PyTorch loop (same
initial weights, full-batch SGD).

Everything is built in the script (a two-layer regressor, 32 rows); nothing is downloaded.
"""

import sys
import tempfile

import torch
from torch import nn
from transformers import Trainer, TrainingArguments

FIXED = "--fixed" in sys.argv[1:]
STEPS, LR = 5, 0.1


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict:
        return {"loss": nn.functional.mse_loss(self.net(x).squeeze(-1).float(), labels)}


generator = torch.Generator().manual_seed(0)
x = torch.randn(32, 8, generator=generator)
y = x @ torch.randn(8, generator=generator)
rows = [{"x": x[i], "labels": y[i]} for i in range(len(x))]

# Where the script trains: left to the Trainer, which looks for a GPU.
device = {}
if FIXED:
    # --- fix: start
    device = {"use_cpu": True}  # no bf16-capable GPU here: train on the CPU, bf16 autocast included
    # --- fix: end

torch.manual_seed(0)
model = Regressor()
with tempfile.TemporaryDirectory(prefix="repro-bf16-") as output_dir:
    args = TrainingArguments(
        output_dir=output_dir,
        bf16=True,
        **device,
        max_steps=STEPS,
        per_device_train_batch_size=len(rows),
        optim="sgd",
        learning_rate=LR,
        lr_scheduler_type="constant",
        weight_decay=0.0,
        max_grad_norm=0.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=rows)
    trainer.train()

    # --- check: start
    # The run used bf16 mixed precision, on the CPU...
    assert trainer.accelerator.mixed_precision == "bf16", trainer.accelerator.mixed_precision
    assert args.device.type == "cpu", args.device
    # ...and its loss at every step equals that of the same model trained in fp32 by hand.
    torch.manual_seed(0)
    reference = Regressor()
    optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
    expected = []
    for _ in range(STEPS):
        loss = reference(x, y)["loss"]
        expected.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    logged = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(logged) == STEPS, logged
    torch.testing.assert_close(torch.tensor(logged), torch.tensor(expected), rtol=2e-2, atol=1e-3)
    print(f"check: bf16 losses {logged} match the fp32 reference {[round(v, 4) for v in expected]}")
    # --- check: end
