"""Reproducer for peft-prepare-int8-training-removed.

A LoRA fine-tuning script written for PEFT 0.9 and earlier loads a causal LM in 8-bit
(here a tiny Llama built from a config and saved; bitsandbytes runs its int8 layers on the
CPU), prepares it with `prepare_model_for_int8_training`, and wraps it with a LoRA adapter
on `q_proj` and `v_proj`.

`python repro.py`: PEFT 0.10 removed that function (0.4 to 0.9 only warned), so with the
catalog's PEFT 0.21.2 the script's import fails: `ImportError: cannot import name
'prepare_model_for_int8_training' from 'peft' (.../peft/__init__.py)`.
`python repro.py --fixed`: the script imports `prepare_model_for_kbit_training`, the
function the old name called since PEFT 0.4, and calls it the same way. The check: every
weight of the base model is frozen, no fp16 weight is left (the non-int8 ones are upcast to
fp32), gradient checkpointing is on, the trainable parameters are exactly the LoRA
matrices (names and count computed from the config), the adapted model's logits equal the
8-bit model's before preparation (LoRA starts as a no-op), and one optimizer step changes
only LoRA weights.
"""

import sys
import tempfile

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, LlamaConfig, LlamaForCausalLM

FIXED = "--fixed" in sys.argv[1:]


def prepare_for_training(model):
    """How QLoRA and int8 LoRA scripts written for PEFT 0.9 and earlier prepared the model."""
    from peft import prepare_model_for_int8_training

    return prepare_model_for_int8_training(model)


if FIXED:
    # --- fix: start
    from peft import prepare_model_for_kbit_training

    def prepare_for_training(model):
        return prepare_model_for_kbit_training(model)

    # --- fix: end

CONFIG = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
R = 4
with tempfile.TemporaryDirectory(prefix="repro-peft-int8-") as workdir:
    torch.manual_seed(0)
    LlamaForCausalLM(CONFIG).save_pretrained(workdir)
    model = AutoModelForCausalLM.from_pretrained(
        workdir, quantization_config=BitsAndBytesConfig(load_in_8bit=True), dtype=torch.float16, use_cache=False
    )
input_ids = torch.arange(16).reshape(2, 8) * 5 % 64
with torch.no_grad():
    before = model(input_ids).logits.float()

model = prepare_for_training(model)
model = get_peft_model(model, LoraConfig(r=R, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0))
model.print_trainable_parameters()

# --- check: start
trainable = {name: p for name, p in model.named_parameters() if p.requires_grad}
expected = {
    f"base_model.model.model.layers.{layer}.self_attn.{proj}.lora_{ab}.default.weight"
    for layer in range(CONFIG.num_hidden_layers) for proj in ("q_proj", "v_proj") for ab in "AB"
}
assert set(trainable) == expected, sorted(set(trainable) ^ expected)
head_dim = CONFIG.hidden_size // CONFIG.num_attention_heads
per_layer = R * (CONFIG.hidden_size + CONFIG.hidden_size) + R * (CONFIG.hidden_size + CONFIG.num_key_value_heads * head_dim)
assert sum(p.numel() for p in trainable.values()) == CONFIG.num_hidden_layers * per_layer
assert not any(p.dtype in (torch.float16, torch.bfloat16) for p in model.parameters()), "fp16 weights left"
assert model.base_model.model.is_gradient_checkpointing
model.eval()
with torch.no_grad():
    torch.testing.assert_close(model(input_ids).logits.float(), before, atol=2e-3, rtol=2e-3)
model.train()
frozen = {name: p.detach().clone() for name, p in model.named_parameters() if not p.requires_grad}
optimizer = torch.optim.SGD(trainable.values(), lr=0.1)
model(input_ids=input_ids, labels=input_ids).loss.backward()
optimizer.step()
assert all(torch.equal(p, frozen[name]) for name, p in model.named_parameters() if name in frozen)
assert any(p.abs().sum() > 0 for name, p in trainable.items() if "lora_B" in name), "LoRA did not train"
print(f"check: {len(trainable)} LoRA matrices trainable, {len(frozen)} base tensors frozen and unchanged, logits unchanged")
# --- check: end
