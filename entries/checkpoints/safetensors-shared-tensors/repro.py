"""Reproducer for safetensors-shared-tensors.

`python repro.py`: a small language model ties its output projection to its input
embedding (`lm_head.weight = embed.weight`, as GPT-2, Llama-style models with
`tie_word_embeddings` and T5 do). `model.state_dict()` lists the one tensor under both
names, and `safetensors.torch.save_file(model.state_dict(), ...)` refuses it:
`Some tensors share memory, this will lead to duplicate memory on disk and potential
differences when loading them again: [{'lm_head.weight', 'embed.weight'}]` (the order inside
the set varies from run to run).
`python repro.py --fixed`: `safetensors.torch.save_model` writes each shared storage once
(under one name, recording the dropped alias in the file's metadata) and
`safetensors.torch.load_model` loads it into a fresh model whose tie is rebuilt by its own
constructor. The check compares the reloaded model's tensors and outputs with the saved
model's and that the tie survived.
"""

import os
import sys
import tempfile

import torch
from safetensors.torch import load_file, save_file
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class TiedLM(nn.Module):
    def __init__(self, vocab: int = 50, dim: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.block = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.embed.weight  # weight tying: one Parameter, two names

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(torch.tanh(self.block(self.embed(ids))))


def save_and_reload(model: nn.Module, path: str) -> nn.Module:
    save_file(model.state_dict(), path)
    restored = TiedLM()
    restored.load_state_dict(load_file(path))
    return restored


if FIXED:
    # --- fix: start
    from safetensors.torch import load_model, save_model

    def save_and_reload(model: nn.Module, path: str) -> nn.Module:
        save_model(model, path)  # one name per shared storage; the dropped alias goes in the metadata
        restored = TiedLM()
        load_model(restored, path)  # fills the kept name; the model's own tie restores the alias
        return restored
    # --- fix: end


torch.manual_seed(0)
model = TiedLM()
print("state_dict keys:", list(model.state_dict()))
print("lm_head.weight is embed.weight:", model.lm_head.weight is model.embed.weight)

with tempfile.TemporaryDirectory(prefix="repro-safetensors-shared-") as workdir:
    path = os.path.join(workdir, "model.safetensors")
    restored = save_and_reload(model, path)
    print(f"{os.path.basename(path)}: {os.path.getsize(path)} bytes")

# --- check: start
ids = torch.randint(0, 50, (2, 7))
torch.testing.assert_close(restored.state_dict(), model.state_dict())
torch.testing.assert_close(restored(ids), model(ids))
assert restored.lm_head.weight is restored.embed.weight
print("check: reloaded tensors and outputs equal the saved model's; lm_head is still tied to embed")
# --- check: end
