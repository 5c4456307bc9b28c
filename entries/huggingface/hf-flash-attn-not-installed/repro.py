"""Reproducer for hf-flash-attn-not-installed.

`python repro.py`: a training script loads a small Llama checkpoint with
`attn_implementation="flash_attention_2"` (the setting a recipe, a config file or a
framework's default turned on), on a machine where the `flash-attn` package is not
installed. `from_pretrained` checks for the package before it builds the model and raises
`ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the
following error: the package for FlashAttention2 doesn't seem to be installed.` (4.36 to
5.3: `the package flash_attn seems to be not installed`).
`python repro.py --fixed`: the script asks for `sdpa`, PyTorch's own fused attention,
which every torch build has. The check runs the loaded model and compares its logits with
the same checkpoint loaded with the `eager` (plain matmul and softmax) attention.

The failure's own check runs for real: the machine lacks `flash-attn` as the reader's does
(the catalog installs no such package). Everything else is built in the script: a 2-layer
Llama with hidden size 32, saved to a temporary folder. Nothing is downloaded.
"""

import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

with tempfile.TemporaryDirectory(prefix="repro-checkpoint-") as folder:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    LlamaForCausalLM(config).save_pretrained(folder)

    attn_implementation = "flash_attention_2"  # what the recipe asks for
    if FIXED:
        # --- fix: start
        # Ask for an attention implementation this machine has: "sdpa" ships with torch.
        attn_implementation = "sdpa"
        # --- fix: end

    model = LlamaForCausalLM.from_pretrained(folder, attn_implementation=attn_implementation).eval()
    print("loaded with attention:", model.config._attn_implementation)
    input_ids = torch.tensor([[1, 7, 11, 5, 3, 9, 2, 4]])
    with torch.no_grad():
        logits = model(input_ids=input_ids).logits

    # --- check: start
    # The model computes what the checkpoint does: its logits equal the same checkpoint's
    # run with the plain eager attention (matmul, causal mask, softmax) on the same tokens.
    reference = LlamaForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    with torch.no_grad():
        expected = reference(input_ids=input_ids).logits
    assert logits.shape == expected.shape == (1, 8, 64), logits.shape
    torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)
    print(f"check: logits {tuple(logits.shape)} equal the eager attention's within 1e-5")
    # --- check: end
