"""Reproducer for hf-use-cache-with-gradient-checkpointing.

A fine-tuning loop turns on gradient checkpointing (`model.gradient_checkpointing_enable()`,
as `TrainingArguments(gradient_checkpointing=True)` does) on a causal LM whose config keeps
`use_cache=True`, the default every generative model ships with (here a tiny Llama built
from a config). It trains 4 full-batch SGD steps on the CPU.

`python repro.py`: at the first training forward transformers sees `use_cache=True` on a
module that checkpoints, turns the cache off for that call, and logs `\\`use_cache=True\\`
is incompatible with gradient checkpointing. Setting \\`use_cache=False\\`.`; training goes
on (the warning is harmless).
`python repro.py --fixed`: `model.config.use_cache = False` before training, so no forward
asks for a cache, and no warning is logged. The check: the losses of the 4 steps and the
final weights equal those of the same model trained without gradient checkpointing (the
plain computation checkpointing must reproduce), and, with the cache turned back on for
inference, greedy generation gives the same tokens as without a cache.
"""

import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

FIXED = "--fixed" in sys.argv[1:]
STEPS, LR = 4, 0.5
CONFIG = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
batch = torch.arange(64).reshape(8, 8) * 7 % 61


def train(model: LlamaForCausalLM) -> list[float]:
    """Full-batch SGD on `batch`; the loss of every step."""
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for _ in range(STEPS):
        loss = model(input_ids=batch, labels=batch).loss
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


torch.manual_seed(0)
model = LlamaForCausalLM(CONFIG)
reference = LlamaForCausalLM(CONFIG)
reference.load_state_dict(model.state_dict())

model.gradient_checkpointing_enable()  # trade compute for activation memory
if FIXED:
    # --- fix: start
    # No KV cache while training: it is only of use when generating.
    model.config.use_cache = False
    # --- fix: end
losses = train(model)
print("losses with gradient checkpointing:", [round(v, 5) for v in losses])

# --- check: start
# Checkpointing recomputes the same forward: the losses and weights equal plain training.
reference_losses = train(reference)
torch.testing.assert_close(torch.tensor(losses), torch.tensor(reference_losses), rtol=1e-5, atol=1e-6)
for (name, value), expected in zip(model.named_parameters(), reference.parameters()):
    torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-6, msg=name)
# For inference the cache comes back on, and greedy decoding is unchanged by it.
model.eval()
model.config.use_cache = True
prompt = batch[:2, :4]
with torch.no_grad():
    options = {"attention_mask": torch.ones_like(prompt), "pad_token_id": 0, "max_new_tokens": 6, "do_sample": False}
    cached = model.generate(prompt, use_cache=True, **options)
    uncached = model.generate(prompt, use_cache=False, **options)
assert torch.equal(cached, uncached), (cached, uncached)
print(f"check: {STEPS} losses and all weights equal training without checkpointing; cached generation equals uncached")
# --- check: end
