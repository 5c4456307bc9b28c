"""Reproducer for hf-trainer-grad-norm-nan.

`python repro.py`: a small causal LM is fine-tuned with `Trainer` after being loaded with
`from_pretrained(..., dtype=torch.float16)` to halve its memory, without mixed precision.
Adam's second moment (the running mean of squared gradients) underflows to zero in
float16 for every small gradient, so the step for those weights becomes
`lr * exp_avg / eps`, orders of magnitude larger than the learning rate. The loss climbs,
the weights overflow float16, and from then on every logged dict reads `'loss': '0',
'grad_norm': 'nan'`: the Trainer drops the NaN losses from its average and goes on.
`python repro.py --fixed`: the model is loaded in float32 (the master weights) and
`bf16=True` runs the forward and backward passes in bfloat16 under autocast, so Adam
updates float32 weights with float32 statistics. Every logged loss is finite and the
loss goes down.

Everything is built in the script: a 2-layer GPT-2 with hidden size 32, saved to a
temporary folder and loaded back, and a repetitive token data set. Nothing is downloaded;
the run uses the CPU.
"""

import math
import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.TemporaryDirectory(prefix="repro-trainer-")
checkpoint = os.path.join(work.name, "checkpoint")
torch.manual_seed(0)
GPT2LMHeadModel(GPT2Config(
    vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0,
)).save_pretrained(checkpoint)

# A corpus the model can learn: 64 sequences of a repeated 8-token motif.
generator = torch.Generator().manual_seed(1)
train = []
for _ in range(64):
    ids = torch.randint(1, 64, (8,), generator=generator).repeat(2)
    train.append({"input_ids": ids, "labels": ids.clone()})

load_dtype = torch.float16  # "to halve the memory"
mixed_precision = {}
if FIXED:
    # --- fix: start
    # Keep the trainable (master) weights in float32; run the compute in 16 bits with
    # autocast instead (bf16=True; fp16=True on GPUs without bfloat16).
    load_dtype = torch.float32
    mixed_precision = {"bf16": True}
    # --- fix: end

model = GPT2LMHeadModel.from_pretrained(checkpoint, dtype=load_dtype)
print("weights:", next(model.parameters()).dtype, "mixed precision:", mixed_precision or "off")

args = TrainingArguments(
    output_dir=os.path.join(work.name, "out"),
    per_device_train_batch_size=8,
    max_steps=40,
    learning_rate=1e-3,
    logging_steps=4,
    use_cpu=True,
    report_to="none",
    save_strategy="no",
    disable_tqdm=True,
    seed=0,
    **mixed_precision,
)
trainer = Trainer(model=model, args=args, train_dataset=train)
trainer.train()

# --- check: start
# Every logged training loss and gradient norm is finite, the loss went down, and the
# trained weights are finite.
logged = [entry for entry in trainer.state.log_history if "loss" in entry and "grad_norm" in entry]
losses = [entry["loss"] for entry in logged]
norms = [entry["grad_norm"] for entry in logged]
assert len(logged) == 10, f"{len(logged)} training logs"
assert all(math.isfinite(value) and value > 0 for value in losses), f"losses: {losses}"
assert all(math.isfinite(value) for value in norms), f"gradient norms: {norms}"
assert losses[-1] < losses[0], f"the loss did not go down: {losses[0]} -> {losses[-1]}"
assert all(torch.isfinite(p).all() for p in model.parameters()), "non-finite weights"
print(f"check: {len(losses)} finite losses, {losses[0]:.4f} -> {losses[-1]:.4f}")
# --- check: end
