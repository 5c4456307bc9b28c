"""Reproducer for hf-meta-tensor-copy.

`python repro.py`: a script builds a model skeleton under Accelerate's `init_empty_weights()`
(every parameter on the `meta` device: a shape and dtype, no data), the way big-model
loading starts, but never loads the checkpoint into it; then it moves the model with
`.to("cpu")`. `Module.to` has nothing to copy and torch raises `NotImplementedError: Cannot
copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of
torch.nn.Module.to() when moving module from meta to a different device.`
`python repro.py --fixed`: the model is loaded with its real weights from the checkpoint
(`from_pretrained`, no meta skeleton) and then moved. The check confirms that no parameter
or buffer is left on `meta` and that the model's logits equal those of the model the
checkpoint was saved from, exactly.

Everything is built in the script (a 2-layer GPT-2 with random weights saved to a temporary
folder); nothing is downloaded, and the run uses the CPU.
"""

import sys
import tempfile

import torch
from accelerate import init_empty_weights
from transformers import GPT2Config, GPT2LMHeadModel

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
config = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2)
original = GPT2LMHeadModel(config).eval()
tokens = torch.randint(0, config.vocab_size, (2, 12), generator=torch.Generator().manual_seed(1))

with tempfile.TemporaryDirectory(prefix="repro-meta-") as checkpoint:
    original.save_pretrained(checkpoint)

    # The skeleton without data: the checkpoint is never loaded into it.
    with init_empty_weights():
        model = GPT2LMHeadModel(config)
    if FIXED:
        # --- fix: start
        model = GPT2LMHeadModel.from_pretrained(checkpoint)  # real weights, nothing on meta
        # --- fix: end
    model = model.to("cpu").eval()

    # --- check: start
    # Every parameter and buffer holds data on the CPU...
    on_meta = [name for name, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    assert not on_meta, on_meta
    # ...and they are the checkpoint's: the logits equal the saved model's, exactly.
    with torch.no_grad():
        expected = original(tokens).logits
        got = model(tokens).logits
    assert torch.equal(got, expected), (got - expected).abs().max()
    print(f"check: no tensor on meta; logits {tuple(got.shape)} equal the saved model's")
    # --- check: end
