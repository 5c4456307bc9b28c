"""Reproducer for peft-adapter-saved-empty.

A LoRA fine-tune written after alpaca-lora's `finetune.py`: a causal LM (here a tiny Llama
built from a config and saved to a local folder) is wrapped with `get_peft_model`, and the
script replaces the model's `state_dict` with one that returns only the adapter weights:

    old_state_dict = model.state_dict
    model.state_dict = (
        lambda self, *_, **__: get_peft_model_state_dict(self, old_state_dict())
    ).__get__(model, type(model))

It trains a few steps and saves with `model.save_pretrained(output_dir)`; an inference
script loads the adapter with `PeftModel.from_pretrained(base_model, output_dir)`.
The environment has PEFT 0.15.2 (installed apart: reproducer.private_requirements, first
on `sys.path`), one of the releases (0.3.0 to 0.19.x) whose `save_pretrained` filters the
state dict for the adapter name itself.

`python repro.py`: `save_pretrained` filters the already filtered state dict again; the
override's keys no longer carry the adapter name (`...q_proj.lora_A.weight`), so the
second filter keeps nothing and `adapter_model.safetensors` is a 40-byte file with no
tensor (with `safe_serialization=False`, an `adapter_model.bin` of an empty dict: 443
bytes in the 2023 reports, 1297 bytes with torch 2.13). Loading it
warns `UserWarning: Found missing adapter keys while loading the checkpoint: [...]`,
and the loaded model computes what the base model does.
`python repro.py --fixed`: the override is dropped (`del model.state_dict`, the class's
own method again), and `save_pretrained` filters once.
The check: the saved file holds one `lora_A` and one `lora_B` tensor per adapted layer,
each equal to the trained one; the reloaded model's logits equal the trained model's and
those of a plain Llama whose `q_proj`/`v_proj` weights are merged by hand
(`W + lora_alpha / r * B @ A`), and differ from the base model's.
Nothing is downloaded, and the run uses the CPU.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

# PEFT 0.15.2, installed apart (reproducer.private_requirements): the release the
# environment has, first on the path.
OLD_PEFT = os.path.join(sys.prefix, "failpedia-private", "peft-0.15.2")
sys.path.insert(0, OLD_PEFT)

import torch  # noqa: E402
from peft import LoraConfig, PeftModel, get_peft_model, get_peft_model_state_dict  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

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
RANK, ALPHA = 8, 16  # LoRA rank and scale: the delta is ALPHA / RANK * B @ A
TARGETS = ("q_proj", "v_proj")
STEPS = 20

workdir = tempfile.TemporaryDirectory(prefix="repro-lora-")
base_dir = os.path.join(workdir.name, "base")
output_dir = os.path.join(workdir.name, "lora-alpaca")
torch.manual_seed(0)
LlamaForCausalLM(CONFIG).save_pretrained(base_dir)

# Sequences that count up by a fixed stride: a pattern worth learning.
batch = torch.stack(
    [(s + d * torch.arange(16)) % CONFIG.vocab_size for s, d in ((1, 1), (7, 3), (20, 5), (33, 2))]
)

model = LlamaForCausalLM.from_pretrained(base_dir)
model = get_peft_model(
    model,
    LoraConfig(
        r=RANK,
        lora_alpha=ALPHA,
        target_modules=list(TARGETS),
        lora_dropout=0.0,
        bias="none",
        task_type="CAUSAL_LM",
    ),
)
model.print_trainable_parameters()

# alpaca-lora's finetune.py: model.state_dict returns only the adapter weights.
old_state_dict = model.state_dict
model.state_dict = (
    lambda self, *_, **__: get_peft_model_state_dict(self, old_state_dict())
).__get__(model, type(model))

if FIXED:
    # --- fix: start
    # Drop the override (delete those lines from the script): PeftModel.save_pretrained
    # already keeps only the adapter weights (it calls get_peft_model_state_dict), and
    # filtering a second time leaves nothing on PEFT 0.3.0 to 0.19.x.
    del model.state_dict  # the class's own state_dict again
    # --- fix: end

optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=5e-2)
model.train()
losses = []
for _ in range(STEPS):
    loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print(f"training loss {losses[0]:.4f} -> {losses[-1]:.4f}")
model.eval()

model.save_pretrained(output_dir)
for name in sorted(os.listdir(output_dir)):
    print(f"saved {name}: {os.path.getsize(os.path.join(output_dir, name))} bytes")
saved = load_file(os.path.join(output_dir, "adapter_model.safetensors"))
print(f"tensors in adapter_model.safetensors: {len(saved)}")

# What an inference script does: a fresh base model, the adapter loaded on top.
reloaded = PeftModel.from_pretrained(LlamaForCausalLM.from_pretrained(base_dir), output_dir)
reloaded.eval()

# --- check: start
trained = {name: p.detach().clone() for name, p in model.named_parameters() if ".lora_" in name}
assert len(trained) == 2 * len(TARGETS) * CONFIG.num_hidden_layers, sorted(trained)
# The file: one tensor per trained LoRA matrix, under the name without the adapter name.
expected_keys = {name.replace(".default.", ".") for name in trained}
assert set(saved) == expected_keys, f"saved {sorted(saved)}, expected {sorted(expected_keys)}"
for name, tensor in trained.items():
    torch.testing.assert_close(saved[name.replace(".default.", ".")], tensor)
    torch.testing.assert_close(dict(reloaded.named_parameters())[name].detach(), tensor)
assert any(t.abs().sum() > 0 for n, t in trained.items() if ".lora_B." in n), "B stayed 0"

# The reference: the base weights plus the LoRA delta, merged by hand into a plain Llama.
base = LlamaForCausalLM.from_pretrained(base_dir).eval()
merged = {k: v.clone() for k, v in base.state_dict().items()}
for layer in range(CONFIG.num_hidden_layers):
    for target in TARGETS:
        prefix = f"base_model.model.model.layers.{layer}.self_attn.{target}"
        delta = (
            trained[f"{prefix}.lora_B.default.weight"] @ trained[f"{prefix}.lora_A.default.weight"]
        )
        merged[f"model.layers.{layer}.self_attn.{target}.weight"] += ALPHA / RANK * delta
by_hand = LlamaForCausalLM(CONFIG).eval()
by_hand.load_state_dict(merged)
with torch.no_grad():
    logits_trained = model(input_ids=batch).logits
    logits_reloaded = reloaded(input_ids=batch).logits
    logits_base = base(input_ids=batch).logits
    torch.testing.assert_close(logits_reloaded, logits_trained)
    torch.testing.assert_close(logits_reloaded, by_hand(input_ids=batch).logits)
    gap = (logits_reloaded - logits_base).abs().max().item()
assert gap > 0.1, f"the reloaded model computes what the base model does (max gap {gap})"
assert losses[-1] < 0.9 * losses[0], losses  # it trained
print(f"check: {len(saved)} LoRA tensors saved and reloaded equal to the trained ones")
print(f"check: reloaded logits equal the trained model's and the hand-merged Llama's; {gap=:.3f}")
# --- check: end
