"""Reproducer for hf-quantized-modules-dispatched-cpu-disk.

The job loads a causal LM (here a tiny Llama written with `save_pretrained`) in 8-bit with
`device_map="auto"` on a machine whose main device cannot hold it: `max_memory` gives that
device room for a fifth of the full-precision weights, and the 8-bit model needs over a
quarter (the embeddings and `lm_head` stay 32-bit). On a GPU machine the map would read
`{0: ..., "cpu": ..., "disk": ...}`; this machine has no GPU, so the CPU budget is the
device that is too small and accelerate's planner sends the blocks that do not fit to
"disk". The map then holds "cpu" and "disk", which the bitsandbytes quantizer refuses.

`python repro.py`: `from_pretrained` computes the device map and the 8-bit quantizer's
`validate_environment` raises `ValueError: Some modules are dispatched on the CPU or the
disk. ...`.
`python repro.py --fixed`: what the message asks for. `llm_int8_enable_fp32_cpu_offload=True`
keeps the modules placed on "cpu" or "disk" in 32-bit instead of converting them to int8,
and a custom `device_map` (a dict, planned here with accelerate's `infer_auto_device_map`
for the same budget) tells the quantizer before conversion which modules those are; with
`device_map="auto"` the map is only computed after every Linear has been converted.

The check asserts that the model was dispatched over "cpu" and "disk" with the disk
blocks' weights really offloaded (on the meta device until a forward needs them), that
every Linear of the decoder (all of them placed on "cpu" or "disk" here) stayed a 32-bit
`torch.nn.Linear`, and that the logits equal those
of the full-precision model the checkpoint was written from.

Nothing is downloaded; every file goes to a temporary folder that is removed afterwards.
"""

import os
import shutil
import sys
import tempfile

import torch
from accelerate import infer_auto_device_map, init_empty_weights
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    BitsAndBytesConfig,
    LlamaConfig,
    LlamaForCausalLM,
)

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-bnb-offload-")
checkpoint = os.path.join(work, "tiny-llama")
torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=128,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=12,
    num_attention_heads=4,
    num_key_value_heads=4,
)
reference_model = LlamaForCausalLM(config).eval()
reference_model.save_pretrained(checkpoint)
weight_bytes = sum(p.numel() * p.element_size() for p in reference_model.parameters())

# The job as written: 8-bit, device_map="auto", and a device with room for a fifth of the
# full-precision weights (the 8-bit model needs over a quarter: embeddings stay 32-bit).
max_memory = {"cpu": weight_bytes // 5}
quantization_config = BitsAndBytesConfig(load_in_8bit=True)
device_map = "auto"

if FIXED:
    # --- fix: start
    # Keep the modules that land on "cpu" or "disk" in 32-bit, and pass the placement as a
    # dict so the quantizer knows which modules those are before it converts any layer.
    quantization_config = BitsAndBytesConfig(
        load_in_8bit=True, llm_int8_enable_fp32_cpu_offload=True
    )
    with init_empty_weights():
        empty_model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(checkpoint))
    device_map = infer_auto_device_map(
        empty_model, max_memory=max_memory, no_split_module_classes=empty_model._no_split_modules
    )
    print("custom device_map:", dict(device_map), flush=True)
    # --- fix: end

model = AutoModelForCausalLM.from_pretrained(
    checkpoint,
    quantization_config=quantization_config,
    device_map=device_map,
    max_memory=max_memory,
    offload_folder=os.path.join(work, "offload"),
)
input_ids = torch.arange(32).reshape(2, 16) % config.vocab_size
with torch.no_grad():
    logits = model(input_ids).logits
    reference_logits = reference_model(input_ids).logits
placement = dict(model.hf_device_map)
on_disk = [name for name, place in placement.items() if place == "disk"]
disk_weights = {
    name: param.device.type
    for block in on_disk
    for name, param in model.get_submodule(block).named_parameters(prefix=block)
}
linears = {
    name: (type(module).__name__, module.weight.dtype)
    for name, module in model.named_modules()
    if name.startswith("model.layers.") and hasattr(module, "in_features")
}
shutil.rmtree(work, ignore_errors=True)

# --- check: start
assert set(placement.values()) == {"cpu", "disk"}, placement
assert disk_weights and set(disk_weights.values()) == {"meta"}, disk_weights
assert len(linears) == 12 * 7, linears  # q, k, v, o, gate, up, down in each decoder layer
assert all(kind == ("Linear", torch.float32) for kind in linears.values()), linears
torch.testing.assert_close(logits, reference_logits)
print(
    f"check: {len(on_disk)} of {len(placement)} blocks offloaded to disk, {len(linears)} Linear "
    "layers kept in float32; logits equal the full-precision model's"
)
# --- check: end
