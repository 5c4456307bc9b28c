"""Reproducer for hf-trainer-quantized-model-no-adapters.

A QLoRA-style script loads a causal LM in 4-bit (here a tiny Llama built from a config
and saved; bitsandbytes runs its NF4 layers on the CPU) with
`BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")` and hands it to the
Hugging Face `Trainer`, but never attaches the LoRA adapters.

`python repro.py`: `Trainer.__init__` refuses the model before any step:
`ValueError: You cannot perform fine-tuning on purely quantized models. Please attach
trainable adapters on top of the quantized model ...`.
`python repro.py --fixed`: the script prepares the model with
`prepare_model_for_kbit_training` and attaches LoRA adapters to `q_proj` and `v_proj`
with `get_peft_model` before building the `Trainer`, which then trains for 15 steps.
The check: every packed NF4 byte and every other base weight is unchanged, the LoRA
matrices changed, the trained model's logits equal those of a plain float32 Llama whose
`q_proj`/`v_proj` weights are the dequantized NF4 weights plus the LoRA delta
`lora_alpha / r * B @ A` computed by hand from the adapter matrices, the Trainer's first
logged loss equals that plain model's loss before training, and the loss fell.
"""

import shutil
import sys
import tempfile

import bitsandbytes as bnb
import torch
from transformers import (
    AutoModelForCausalLM,
    BitsAndBytesConfig,
    LlamaConfig,
    LlamaForCausalLM,
    Trainer,
    TrainingArguments,
)

FIXED = "--fixed" in sys.argv[1:]

CONFIG = LlamaConfig(
    vocab_size=64,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=32,
)
STEPS = 15
RANK, ALPHA = 8, 16  # LoRA rank and scale: the delta is ALPHA / RANK * B @ A


def counting_sequences() -> list[dict]:
    """Four sequences that count up by a fixed stride: a pattern worth learning."""
    rows = []
    for start, stride in ((1, 1), (7, 3), (20, 5), (33, 2)):
        ids = (start + stride * torch.arange(16)) % CONFIG.vocab_size
        rows.append({"input_ids": ids, "labels": ids.clone()})
    return rows


def plain_llama(weights: dict) -> LlamaForCausalLM:
    """A float32 Llama (no quantization, no PEFT) with the given weights."""
    model = LlamaForCausalLM(CONFIG)
    model.load_state_dict(weights)
    return model.eval()


workdir = tempfile.mkdtemp(prefix="repro-qlora-")
torch.manual_seed(0)
LlamaForCausalLM(CONFIG).save_pretrained(workdir)
model = AutoModelForCausalLM.from_pretrained(
    workdir,
    quantization_config=BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float32
    ),
    dtype=torch.float32,
)
train_rows = counting_sequences()
batch = {key: torch.stack([row[key] for row in train_rows]) for key in ("input_ids", "labels")}

# What the base model holds before training: the NF4 layers (their packed bytes and their
# dequantized float32 weights) and every other weight, to compare with afterwards.
quantized = {name: m for name, m in model.named_modules() if isinstance(m, bnb.nn.Linear4bit)}
packed = {name: m.weight.data.clone() for name, m in quantized.items()}
dequantized = {
    f"{name}.weight": bnb.functional.dequantize_4bit(m.weight.data, m.weight.quant_state).float()
    for name, m in quantized.items()
}
others = {
    name: (p, p.detach().clone()) for name, p in model.named_parameters() if name not in dequantized
}
base_weights = {**{name: saved for name, (_, saved) in others.items()}, **dequantized}

if FIXED:
    # --- fix: start
    # Attach trainable LoRA adapters on top of the frozen 4-bit weights (QLoRA) before
    # the model reaches the Trainer.
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    model = prepare_model_for_kbit_training(model)
    model = get_peft_model(
        model,
        LoraConfig(
            r=RANK,
            lora_alpha=ALPHA,
            target_modules=["q_proj", "v_proj"],
            lora_dropout=0.0,
            task_type="CAUSAL_LM",
        ),
    )
    model.print_trainable_parameters()
    # --- fix: end

args = TrainingArguments(
    output_dir=workdir,
    max_steps=STEPS,
    per_device_train_batch_size=len(train_rows),
    learning_rate=5e-2,
    logging_steps=1,
    save_strategy="no",
    report_to=[],
    use_cpu=True,
    seed=0,
)
trainer = Trainer(model=model, args=args, train_dataset=train_rows)
trainer.train()
logged = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
print(f"training losses: first {logged[0]:.4f}, last {logged[-1]:.4f}")
shutil.rmtree(workdir)

# --- check: start
for name, module in quantized.items():
    assert torch.equal(module.weight.data, packed[name]), f"{name}: NF4 bytes changed"
for name, (param, saved) in others.items():
    assert torch.equal(param.detach(), saved), f"{name} changed"
lora = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
assert lora and all(".lora_A." in name or ".lora_B." in name for name in lora), sorted(lora)
assert all(lora[name].abs().sum() > 0 for name in lora if ".lora_B." in name), "LoRA B stayed zero"
# The reference: dequantized NF4 weights plus the LoRA delta, merged by hand.
merged = dict(base_weights)
for name in quantized:
    prefix = f"base_model.model.{name}"
    if f"{prefix}.lora_A.default.weight" in lora:
        delta = lora[f"{prefix}.lora_B.default.weight"] @ lora[f"{prefix}.lora_A.default.weight"]
        merged[f"{name}.weight"] = dequantized[f"{name}.weight"] + ALPHA / RANK * delta
assert (
    sum(not torch.equal(merged[k], base_weights[k]) for k in merged) == 2 * CONFIG.num_hidden_layers
)
reference = plain_llama(merged)
# Training mode (no dropout here), as the Trainer ran it: bitsandbytes dequantizes to float32.
model.train()
logits = model(input_ids=batch["input_ids"]).logits.detach()
with torch.no_grad():
    torch.testing.assert_close(logits, reference(batch["input_ids"]).logits)
    before = plain_llama(base_weights)(**batch).loss.item()
    after = reference(**batch).loss.item()
assert abs(logged[0] - before) < 1e-3, (logged[0], before)
assert after < logged[-1] < 0.95 * before, (before, logged[-1], after)
print("check: NF4 bytes and base weights unchanged, logits equal base + LoRA delta by hand")
print(f"check: loss of the hand-merged model {before:.4f} -> {after:.4f}")
# --- check: end
