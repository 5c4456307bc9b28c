"""Reproducer for hf-fp16-requires-cuda.

`python repro.py`: a fine-tuning script asks the `Trainer` for fp16 mixed precision
(`fp16=True`, as `--fp16` on the command line) on a machine that trains on the CPU.
transformers 4.2 to 4.41 check the device in `TrainingArguments.__post_init__` and refuse:
on the 4.40.2 release used here `ValueError: FP16 Mixed precision training with AMP or APEX
(`--fp16`) and FP16 half precision evaluation (`--fp16_full_eval`) can only be used on CUDA
or MLU devices or NPU devices or certain XPU devices (with IPEX).`
`python repro.py --fixed`: the same run in bf16 mixed precision, which those releases allow
on the CPU. The check confirms that training really ran in bf16 autocast and that its loss
at each of the 5 steps equals, within bf16 rounding, the loss of the same model trained in
fp32 by a plain PyTorch loop (same initial weights, full-batch SGD).

transformers 4.40.2 is installed apart (`reproducer.private_requirements`), with the
huggingface-hub and tokenizers releases it accepts, and put first on `sys.path`: the
catalog's transformers 5 no longer has this check. Two packages of the shared environment
are hidden from it (`datasets` and `peft`, releases made for transformers 5 that the old
`Trainer` would import): the run is that of an environment without them. The device check
itself runs as released, on this machine's CPU (the script asks for the CPU with
`use_cpu=True`, so it also fails on a machine with a GPU). Everything else is built in the
script (a two-layer regressor, 32 rows); nothing is downloaded.
"""

import os
import sys
import tempfile

PRIVATE = os.path.join(sys.prefix, "failpedia-private")
for release in ("transformers-4.40.2", "huggingface-hub-0.36.0", "tokenizers-0.19.1"):
    sys.path.insert(0, os.path.join(PRIVATE, release))
# An environment without datasets and peft: importlib.util.find_spec reports them absent.
sys.modules["datasets"] = None  # type: ignore[assignment]
sys.modules["peft"] = None  # type: ignore[assignment]

import torch  # noqa: E402
import transformers  # noqa: E402
from torch import nn  # noqa: E402
from transformers import Trainer, TrainingArguments  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
assert transformers.__version__ == "4.40.2", transformers.__version__

STEPS, LR = 5, 0.1


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict:
        return {"loss": nn.functional.mse_loss(self.net(x).squeeze(-1), labels)}


generator = torch.Generator().manual_seed(0)
x = torch.randn(32, 8, generator=generator)
y = x @ torch.randn(8, generator=generator)
rows = [{"x": x[i], "labels": y[i]} for i in range(len(x))]

# The precision the script asks for: fp16 mixed precision, as `--fp16` does.
precision = {"fp16": True}
if FIXED:
    # --- fix: start
    precision = {"bf16": True}  # bf16 autocast runs on the CPU; fp16 AMP needed CUDA here
    # --- fix: end

torch.manual_seed(0)
model = Regressor()
with tempfile.TemporaryDirectory(prefix="repro-fp16-cpu-") as output_dir:
    args = TrainingArguments(
        output_dir=output_dir,
        **precision,
        use_cpu=True,
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
    # The run used mixed precision, in bf16, on the CPU...
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
