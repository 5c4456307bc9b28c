"""Reproducer for peft-adapter-config-not-found.

`python repro.py`: a LoRA adapter is trained on a small GPT-2, and the script keeps the
result by merging the adapter into the model (`merge_and_unload()`) and saving that with
`save_pretrained`. The folder then holds a full model (`config.json`, `model.safetensors`)
and no adapter. Loading it back as an adapter, `PeftModel.from_pretrained(base, folder)`,
finds no `adapter_config.json` there, tries the folder name as a Hub repository id, and
raises `ValueError: Can't find 'adapter_config.json' at '<folder>'`.
`python repro.py --fixed`: the script saves the adapter itself, `peft_model.save_pretrained`,
which writes `adapter_config.json` and the adapter weights. The check loads it onto a fresh
copy of the base model and confirms that the loaded adapter's outputs equal the trained
model's, and differ from the base model's (the adapter really was trained and loaded).

Everything is built in the script (a 2-layer GPT-2 with random weights, 3 SGD steps on
random tokens); nothing is downloaded (the Hub is switched off), and the run uses the CPU.
"""

import os
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"  # the runner has no network; the lookup fails the same way online

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel

FIXED = "--fixed" in sys.argv[1:]

config = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2)
tokens = torch.randint(0, config.vocab_size, (4, 12), generator=torch.Generator().manual_seed(1))


def base_model() -> GPT2LMHeadModel:
    """The same base weights every time, as from_pretrained of one checkpoint gives."""
    torch.manual_seed(0)
    return GPT2LMHeadModel(config).eval()


peft_model = get_peft_model(base_model(), LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn"], lora_dropout=0.0))
optimizer = torch.optim.SGD([p for p in peft_model.parameters() if p.requires_grad], lr=0.5)
peft_model.train()
for _ in range(3):
    loss = peft_model(tokens, labels=tokens).loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
peft_model.eval()
with torch.no_grad():
    trained = peft_model(tokens).logits
    untouched = base_model()(tokens).logits

with tempfile.TemporaryDirectory(prefix="repro-adapter-") as folder:
    adapter_dir = os.path.join(folder, "lora-adapter")
    # How the script keeps its result: the adapter merged into a full model.
    save = lambda: peft_model.merge_and_unload().save_pretrained(adapter_dir)  # noqa: E731
    if FIXED:
        # --- fix: start
        # Save the adapter itself: adapter_config.json and the adapter weights.
        save = lambda: peft_model.save_pretrained(adapter_dir)  # noqa: E731
        # --- fix: end
    save()
    print("saved:", sorted(os.listdir(adapter_dir)))

    loaded = PeftModel.from_pretrained(base_model(), adapter_dir).eval()

    # --- check: start
    with torch.no_grad():
        got = loaded(tokens).logits
    # The loaded adapter computes what the trained model computed...
    torch.testing.assert_close(got, trained, rtol=0, atol=1e-6)
    # ...which is not what the base model alone computes: the adapter was trained and loaded.
    assert not torch.allclose(got, untouched, atol=1e-3), "adapter has no effect"
    print(f"check: loaded adapter's logits {tuple(got.shape)} equal the trained model's")
    # --- check: end
