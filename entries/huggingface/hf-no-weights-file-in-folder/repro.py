"""Reproducer for hf-no-weights-file-in-folder.

A LoRA fine-tuning script saves what it trained the way many LLaVA-style scripts do:
`model.save_pretrained(out)` on the PEFT model (`adapter_config.json`,
`adapter_model.safetensors`) and `model.config.save_pretrained(out)` beside it. The
inference script then loads that folder as if it held a whole model. A tiny GPT-2 is
built in the script; the base model is saved to its own folder, as a downloaded base is.

`python repro.py`: `AutoModelForCausalLM.from_pretrained("run/lora")` finds
`config.json` but no `model.safetensors`, `pytorch_model.bin` or index of shards and
raises `OSError: Error no file named model.safetensors, or pytorch_model.bin, found in
directory run/lora.` (transformers 5.23.0).
`python repro.py --fixed`: the adapter is applied to the base model it was trained on,
merged, and the full model saved to its own folder, which is then loaded.
The check: the loaded model's logits equal those of the fine-tuned model at the end of
training, differ from the base model's (the adapter's update is in the weights), and the
folder holds weights for every parameter.
"""

import atexit
import os
import shutil
import sys
import tempfile

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel

FIXED = "--fixed" in sys.argv[1:]

work = tempfile.mkdtemp(prefix="repro-weights-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.chdir(work)
torch.manual_seed(0)
config = GPT2Config(
    n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=32, bos_token_id=0, eos_token_id=0
)
GPT2LMHeadModel(config).save_pretrained("base")  # the downloaded base model

# The training script: LoRA on the attention projection, a few steps, then its save.
model = get_peft_model(
    AutoModelForCausalLM.from_pretrained("base"), LoraConfig(r=4, target_modules=["c_attn"])
)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
batch = torch.randint(1, 64, (4, 16))
for _ in range(5):
    loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
model.eval()
with torch.no_grad():
    reference = model(input_ids=batch).logits
model.save_pretrained("run/lora")
model.config.save_pretrained("run/lora")
print("run/lora holds", sorted(os.listdir("run/lora")))

# The inference script.
path = "run/lora"
if FIXED:
    # --- fix: start
    # The folder holds an adapter, not a model: apply it to its base model, merge the
    # update into the weights, and save the full model to load from then on.
    base = AutoModelForCausalLM.from_pretrained("base")
    merged = PeftModel.from_pretrained(base, "run/lora").merge_and_unload()
    merged.save_pretrained("run/merged")
    path = "run/merged"
    # --- fix: end
loaded = AutoModelForCausalLM.from_pretrained(path).eval()
with torch.no_grad():
    logits = loaded(input_ids=batch).logits
print(f"loaded {type(loaded).__name__} from {path}")

# --- check: start
with torch.no_grad():
    base_logits = AutoModelForCausalLM.from_pretrained("base").eval()(input_ids=batch).logits
assert not torch.allclose(base_logits, reference, atol=1e-4), "training changed nothing"
torch.testing.assert_close(logits, reference, rtol=1e-4, atol=1e-5)
expected = {name for name, _ in GPT2LMHeadModel(config).named_parameters()}
assert {name for name, _ in loaded.named_parameters()} == expected
print("check: the loaded model's logits equal the fine-tuned model's, not the base model's")
# --- check: end
