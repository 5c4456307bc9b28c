"""Reproducer for peft-target-modules-not-found.

A LoRA recipe written for Llama-style models (`target_modules=["q_proj", "v_proj"]`) is
applied to a model whose attention uses one fused projection named `query_key_value`
(as GPT-NeoX, Falcon, BLOOM and ChatGLM do). A tiny model of that shape is built in the
script.

`python repro.py`: `get_peft_model` finds no module whose name ends in `q_proj` or
`v_proj` and raises `ValueError: Target modules {'q_proj', 'v_proj'} not found in the
base model. Please check the target modules and try again.`
`python repro.py --fixed`: the target names are taken from the model's own modules (the
`nn.Linear` layers named `query_key_value`). The check counts the adapted layers (one per
attention block) and compares the adapted model's output with the base model's (LoRA
starts as an exact no-op), then trains one step and checks only LoRA weights train.
"""

import sys

import torch
from peft import LoraConfig, get_peft_model

FIXED = "--fixed" in sys.argv[1:]


class Attention(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query_key_value = torch.nn.Linear(dim, 3 * dim)  # fused q, k, v projection
        self.dense = torch.nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.query_key_value(x).chunk(3, dim=-1)
        weights = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.dense(weights @ v)


class TinyNeoX(torch.nn.Module):
    def __init__(self, dim=16, layers=3):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.ModuleDict({"attention": Attention(dim), "mlp": torch.nn.Linear(dim, dim)})
            for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer["attention"](x)
            x = x + torch.relu(layer["mlp"](x))
        return x


torch.manual_seed(0)
base = TinyNeoX()
x = torch.randn(2, 5, 16)
with torch.no_grad():
    base_output = base(x)

target_modules = ["q_proj", "v_proj"]  # the bug: Llama's layer names, not this model's
if FIXED:
    # --- fix: start
    # Target the names this model uses: list its Linear layers and pick the attention
    # projections (here the fused query_key_value).
    linear_names = {name.rsplit(".", 1)[-1] for name, module in base.named_modules()
                    if isinstance(module, torch.nn.Linear)}
    print("Linear layers in the model:", sorted(linear_names))
    target_modules = ["query_key_value"]
    # --- fix: end

config = LoraConfig(r=4, lora_alpha=8, target_modules=target_modules, lora_dropout=0.0)
model = get_peft_model(base, config)
model.print_trainable_parameters()

with torch.no_grad():
    adapted_output = model(x)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
model(x).pow(2).mean().backward()
optimizer.step()

# --- check: start
# One adapter per attention block, on the fused projection; at init LoRA changes
# nothing; only LoRA weights train, and they did.
adapted = sorted(name for name, module in model.named_modules() if hasattr(module, "lora_A"))
expected = [f"base_model.model.layers.{i}.attention.query_key_value" for i in range(3)]
assert adapted == expected, f"adapted layers: {adapted}"
torch.testing.assert_close(adapted_output, base_output)
trainable = [name for name, p in model.named_parameters() if p.requires_grad]
assert trainable and all("lora_" in name for name in trainable), trainable
assert all(model.get_parameter(name).abs().sum() > 0 for name in trainable if "lora_B" in name)
print(f"check: {len(adapted)} attention projections adapted, output equals the base model at init, only LoRA weights trained")
# --- check: end
