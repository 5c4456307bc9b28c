"""Reproducer for hf-quantized-model-to-not-supported.

An inference script written for full-precision models loads a causal LM and then places
it the usual way, `model.to(DEVICE, dtype=DTYPE)`. Here the model is loaded in 4-bit with
`BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")` (a tiny Llama built
from a config and saved; bitsandbytes runs its NF4 layers on the CPU, nothing is
downloaded).

`python repro.py`: transformers refuses to cast a bitsandbytes model after loading, even to
the dtype it already has: `ValueError: You cannot cast a bitsandbytes model in a new
`dtype`. Make sure to load the model using `from_pretrained` using the desired `dtype` by
passing the correct `dtype` argument.` (transformers 4.32 to 4.44 refused any `.to`, a
device alone included, with "`.to` is not supported for `4-bit` or `8-bit` bitsandbytes
models").
`python repro.py --fixed`: the device and the dtype are given to `from_pretrained`
(`device_map=DEVICE`, `dtype=DTYPE`) and the model is not moved afterwards; the inputs are
moved to `model.device` instead. The check: every linear layer of the decoder is still an
NF4 `Linear4bit` loaded as packed 4-bit bytes, the model sits on DEVICE with its other
weights in DTYPE, and its logits equal, within the bfloat16 rounding of bitsandbytes' CPU
kernel, those of a plain float32 Llama built from the same config whose linear weights are
the NF4 weights dequantized by bitsandbytes' own `dequantize_4bit`; the unquantized model's
logits lie about ten times further away.
"""

import os
import shutil
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import bitsandbytes as bnb  # noqa: E402
import torch  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForCausalLM,
    BitsAndBytesConfig,
    LlamaConfig,
    LlamaForCausalLM,
)

FIXED = "--fixed" in sys.argv[1:]

DEVICE = "cpu"  # "cuda:0" on a GPU machine: the same calls, the same error
DTYPE = torch.float32
BNB_CONFIG = BitsAndBytesConfig(
    load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=DTYPE
)
CONFIG = LlamaConfig(
    vocab_size=64,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=32,
)

workdir = tempfile.mkdtemp(prefix="repro-bnb-to-")
torch.manual_seed(0)
LlamaForCausalLM(CONFIG).save_pretrained(workdir)
input_ids = torch.stack([torch.arange(1, 17), (7 + 3 * torch.arange(16)) % CONFIG.vocab_size])


def load_model(path):
    """As for a full-precision model: load, then move and cast it where it should run."""
    model = AutoModelForCausalLM.from_pretrained(path, quantization_config=BNB_CONFIG)
    return model.to(DEVICE, dtype=DTYPE)


if FIXED:
    # --- fix: start
    def load_model(path):
        """Place and cast at load time; a bitsandbytes model is not moved or cast afterwards."""
        return AutoModelForCausalLM.from_pretrained(
            path, quantization_config=BNB_CONFIG, device_map=DEVICE, dtype=DTYPE
        )

    # --- fix: end


model = load_model(workdir).eval()
# What the NF4 layers hold after loading, dequantized by bitsandbytes' own dequantize_4bit
# before the first forward (on a CPU with AVX512-BF16, bitsandbytes repacks them for its
# inference kernel then).
quantized = {name: m for name, m in model.named_modules() if isinstance(m, bnb.nn.Linear4bit)}
packed_bytes = {name: (m.weight.dtype, m.weight.numel()) for name, m in quantized.items()}
dequantized = {
    f"{name}.weight": bnb.functional.dequantize_4bit(m.weight.data, m.weight.quant_state)
    for name, m in quantized.items()
}
input_ids = input_ids.to(model.device)  # move the inputs to the model, not the model
with torch.no_grad():
    logits = model(input_ids=input_ids).logits
print(f"quantized model on {model.device}, logits {tuple(logits.shape)} {logits.dtype}")

# --- check: start
# The model is still quantized: every linear layer of the decoder is an NF4 Linear4bit whose
# weight was loaded as packed bytes (two 4-bit values a byte), not a float matrix.
assert len(quantized) == 7 * CONFIG.num_hidden_layers, sorted(quantized)
for name, module in quantized.items():
    assert module.weight.quant_state.quant_type == "nf4", name
    dtype, numel = packed_bytes[name]
    assert dtype == torch.uint8 and numel * 2 == module.in_features * module.out_features, name
# It sits where the script wanted it, with its other weights in the dtype it asked for.
assert model.device == torch.device(DEVICE), model.device
assert all(p.device == torch.device(DEVICE) for p in model.parameters())
others = {n: p for n, p in model.named_parameters() if n.rsplit(".", 1)[0] not in quantized}
assert others and all(p.dtype == DTYPE for p in others.values())
assert logits.device == torch.device(DEVICE) and logits.dtype == DTYPE

# The reference, computed another way: a plain float32 Llama (no quantization, no
# bitsandbytes layers) whose linear weights are the dequantized NF4 weights and whose other
# weights are the quantized model's.
weights = {n: p.detach().to("cpu", torch.float32) for n, p in others.items()}
weights.update({n: w.to("cpu", torch.float32) for n, w in dequantized.items()})
reference = LlamaForCausalLM(CONFIG).eval()
reference.load_state_dict(weights)
unquantized = LlamaForCausalLM.from_pretrained(workdir, dtype=torch.float32).eval()
with torch.no_grad():
    expected = reference(input_ids=input_ids.cpu()).logits
    full_precision = unquantized(input_ids=input_ids.cpu()).logits
# Tolerance: where bitsandbytes dequantizes NF4 to the float32 compute dtype and multiplies,
# the two agree to float32 rounding (bit for bit here with gradients on). On a CPU with
# AVX512-BF16, bitsandbytes 0.50.2 runs inference (eval mode, no grad) through a
# fused kernel that casts the activations and the NF4 block scales to bfloat16, whose 8-bit
# significand rounds each by up to 2^-9 of its size; over two layers and the head that
# stays within 1% of the largest logit (0.0025 of 0.58 measured, under half of it). The NF4
# rounding itself moves the logits about ten times that far from the unquantized model's,
# so a model that was not quantized, or not run, fails the comparison.
atol = 0.01 * expected.abs().max().item()
torch.testing.assert_close(logits.cpu(), expected, rtol=0.0, atol=atol)
nf4_shift = (full_precision - expected).abs().max().item()
assert nf4_shift > 4 * atol, (nf4_shift, atol)
print(f"check: {len(quantized)} NF4 layers on {model.device}; logits equal the dequantized")
print(f"float32 reference within {atol:.4f} (NF4 rounding moves them {nf4_shift:.3f})")
# --- check: end

shutil.rmtree(workdir)
