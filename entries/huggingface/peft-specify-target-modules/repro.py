"""Reproducer for peft-specify-target-modules.

A small tabular classifier (plain `nn.Module`, layers `fc1`, `fc2`, `head`) is fine-tuned
with LoRA through `get_peft_model`, with a `LoraConfig` that names no `target_modules`,
as in recipes written for Llama or BERT. PEFT fills `target_modules` only from its table
of known transformers model types; this model has none, so `python repro.py` fails with
`ValueError: Please specify `target_modules` or `target_parameters`in `peft_config``
(peft 0.21.2; `Please specify `target_modules` in `peft_config`` in other tuners and
older releases). `python repro.py --fixed`: the config names the model's hidden
`nn.Linear` layers, LoRA attaches to exactly those, the wrapped model's output at
initialisation equals the base model's, and a training step changes only the adapter
weights.
"""

import copy
import logging
import sys
import warnings

import torch
from torch import nn

logging.disable(logging.WARNING)
warnings.filterwarnings("ignore", message="Failed to load CPU gemm_4bit_forward")

from peft import LoraConfig, get_peft_model  # noqa: E402
from peft.tuners.lora import LoraLayer  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


class TabularNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 32)
        self.head = nn.Linear(32, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


base = TabularNet()
base_copy = copy.deepcopy(base)  # the untouched base model, for the check
x = torch.randn(16, 10)
y = torch.randint(0, 3, (16,))

config = LoraConfig(r=4, lora_alpha=8, modules_to_save=["head"])
if FIXED:
# --- fix: start
    # Name the model's own Linear layers: PEFT only knows defaults for transformers model types.
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["fc1", "fc2"], modules_to_save=["head"])
# --- fix: end
model = get_peft_model(base, config)
lora_layers = sorted(name for name, m in model.named_modules() if isinstance(m, LoraLayer))
print("LoRA layers:", lora_layers)

with torch.no_grad():
    out_init = model(x)
before = {n: p.detach().clone() for n, p in model.named_parameters()}
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()
changed = sorted(n for n, p in model.named_parameters() if not torch.equal(p, before[n]))
print("changed by one step:", changed)

# --- check: start
# Adapters sit on exactly the named layers.
assert [n.rsplit(".", 1)[-1] for n in lora_layers] == ["fc1", "fc2"], lora_layers
# At initialisation (lora_B is zero) the wrapped model computes what the base model does.
with torch.no_grad():
    torch.testing.assert_close(out_init, base_copy(x))
# The step changed adapter weights (and the head trained in full), never a frozen base weight.
assert any("lora_B" in n for n in changed), changed
frozen_changed = [n for n in changed if "lora_" not in n and "modules_to_save" not in n]
assert not frozen_changed, frozen_changed
for name in ("fc1", "fc2"):
    layer = dict(model.named_modules())[next(n for n in lora_layers if n.endswith(name))]
    torch.testing.assert_close(layer.base_layer.weight, getattr(base_copy, name).weight)
print("check: adapters on fc1 and fc2, output at init equals the base model, base weights unchanged")
# --- check: end
