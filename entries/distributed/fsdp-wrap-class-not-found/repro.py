"""Reproducer for fsdp-wrap-class-not-found.

A fine-tuning script written for LLaMA in early 2023 names the decoder block
`LLaMADecoderLayer` in its FSDP settings (`fsdp_transformer_layer_cls_to_wrap`), the name
that class had in transformers' first LLaMA port; released transformers calls it
`LlamaDecoderLayer`. The model here is a tiny `LlamaForCausalLM` built from a config.

`python repro.py`: Accelerate's `FullyShardedDataParallelPlugin.set_auto_wrap_policy`,
which `Accelerator.prepare` calls before wrapping the model in FSDP, looks each name up
among the model's modules, finds no `LLaMADecoderLayer` and raises `ValueError: Could not
find the transformer layer class LLaMADecoderLayer in the model.`
`python repro.py --fixed`: the plugin names the model's real block class; the policy is
built and the model is wrapped in PyTorch FSDP (`fully_shard`, FSDP2) with it, on the CPU (a one-process gloo
group), and trained for a few steps. Accelerate itself only uses FSDP on accelerators, so
the reproducer calls the plugin method `prepare` calls and wraps the model with the policy
Accelerate builds from it, as `prepare` does (`fsdp2_prepare_model`). The check: every decoder block is its own FSDP unit, and
the losses and trained weights equal those of the same model trained without FSDP.
"""

import copy
import os
import sys
import tempfile

import torch
import torch.distributed as dist
from accelerate.utils import FullyShardedDataParallelPlugin
from accelerate.utils.fsdp_utils import (
    fsdp2_prepare_auto_wrap_policy,
    get_module_children_bottom_up,
)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule, fully_shard
from transformers import LlamaConfig, LlamaForCausalLM

FIXED = "--fixed" in sys.argv[1:]
STEPS = 4

# The name as the script's FSDP settings give it.
layer_cls_to_wrap = ["LLaMADecoderLayer"]
if FIXED:
    # --- fix: start
    # Name the block class the model really has (see `model._no_split_modules`).
    layer_cls_to_wrap = ["LlamaDecoderLayer"]
    # --- fix: end

torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=128,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=3,
    num_attention_heads=4,
    num_key_value_heads=4,
    max_position_embeddings=64,
)
model = LlamaForCausalLM(config)
reference = copy.deepcopy(model)
print(
    "model blocks:",
    type(model.model.layers[0]).__name__,
    "| _no_split_modules:",
    model._no_split_modules,
)

plugin = FullyShardedDataParallelPlugin(
    fsdp_version=2,
    auto_wrap_policy="transformer_based_wrap",
    transformer_cls_names_to_wrap=layer_cls_to_wrap,
)
plugin.set_auto_wrap_policy(model)  # what Accelerator.prepare does before wrapping
print("auto wrap policy built for", layer_cls_to_wrap)

# Wrap as Accelerate's fsdp2_prepare_model does: each module the policy selects, bottom
# up, then the whole model.
store_file = os.path.join(tempfile.mkdtemp(prefix="repro-fsdp-wrap-"), "store")
dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=0, world_size=1)
mesh = init_device_mesh("cpu", (1,))
policy = fsdp2_prepare_auto_wrap_policy(plugin, model)
for module in get_module_children_bottom_up(model)[:-1]:
    if policy(module) and not isinstance(module, FSDPModule):
        fully_shard(module, mesh=mesh)
wrapped = fully_shard(model, mesh=mesh)

batches = [torch.randint(0, config.vocab_size, (4, 16)) for _ in range(STEPS)]


def train(module: torch.nn.Module) -> list[float]:
    """A few AdamW steps on the same batches; returns the losses."""
    optimizer = torch.optim.AdamW(module.parameters(), lr=1e-3)
    losses = []
    for ids in batches:
        loss = module(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


losses = train(wrapped)
reference_losses = train(reference)
print("FSDP losses:     ", [round(x, 5) for x in losses])
print("reference losses:", [round(x, 5) for x in reference_losses])
trained = {name: value.full_tensor() for name, value in wrapped.state_dict().items()}
units = [m for m in wrapped.modules() if isinstance(m, FSDPModule) and m is not wrapped]

# --- check: start
assert len(units) == config.num_hidden_layers, (
    f"{len(units)} FSDP units for {config.num_hidden_layers} blocks"
)
assert all(type(unit).__name__ == "FSDPLlamaDecoderLayer" for unit in units), units
torch.testing.assert_close(
    torch.tensor(losses), torch.tensor(reference_losses), rtol=1e-5, atol=1e-6
)
expected = reference.state_dict()
assert trained.keys() == expected.keys()
for name, value in expected.items():
    torch.testing.assert_close(trained[name], value, rtol=1e-4, atol=1e-6, msg=name)
print(
    f"check: {len(units)} blocks wrapped as FSDP units; {STEPS} steps train to the reference losses and weights"
)
# --- check: end
dist.destroy_process_group()
