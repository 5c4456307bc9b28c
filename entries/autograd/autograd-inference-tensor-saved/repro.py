"""Reproducer for autograd-inference-tensor-saved.

`python repro.py`: a small transformer block caches its rotary-embedding `cos`/`sin`
tables per sequence length the first time it sees that length. A sanity-check evaluation
runs before training under `@torch.inference_mode()`, so the cached tables are created
there and are inference tensors. The first training step reuses them: `x * cos` saves
`cos` for the backward pass, and autograd refuses to save an inference tensor.
`python repro.py --fixed`: the evaluation runs under `@torch.no_grad()` instead. Nothing is
recorded either way, but tensors created under `no_grad` are normal tensors, so the
cached tables can later be saved for backward and training runs.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)


class Rotary(nn.Module):
    """Rotary position embedding with a lazily built per-length cache (a common pattern)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self.cache: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq_len = x.shape[1]
        if seq_len not in self.cache:  # built once, by whichever call sees this length first
            angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), self.inv_freq)
            angles = torch.cat([angles, angles], dim=-1)
            self.cache[seq_len] = (angles.cos(), angles.sin())
        cos, sin = self.cache[seq_len]
        x1, x2 = x.chunk(2, dim=-1)
        rotated = torch.cat([-x2, x1], dim=-1)
        return x * cos + rotated * sin  # mul saves cos and sin for x's gradient


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 50, dim: int = 16) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rotary = Rotary(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.rotary(self.embed(tokens)))


def loss_fn(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


@torch.inference_mode()
def evaluate(model: nn.Module, tokens: torch.Tensor) -> float:
    model.eval()
    return loss_fn(model, tokens).item()


if FIXED:
    # --- fix: start
    @torch.no_grad()  # not inference_mode: tensors made here must stay usable by autograd
    def evaluate(model: nn.Module, tokens: torch.Tensor) -> float:
        model.eval()
        return loss_fn(model, tokens).item()
    # --- fix: end


def train(model: nn.Module, tokens: torch.Tensor, steps: int = 3) -> list[float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    losses = []
    for step in range(steps):
        loss = loss_fn(model, tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print(f"step {step}: train loss {loss.item():.4f}")
    return losses


model = TinyLM()
untouched = TinyLM()
untouched.load_state_dict(model.state_dict())  # same weights, never evaluated before training
data = torch.randint(0, 50, (8, 13))

eval_loss = evaluate(model, data)
print(f"sanity-check eval loss: {eval_loss:.4f}")
cos, _ = model.rotary.cache[12]
print(f"cached cos table: is_inference={cos.is_inference()}")
losses = train(model, data)

# --- check: start
reference_losses = train(untouched, data)
assert abs(eval_loss - reference_losses[0]) < 1e-5  # eval saw the loss training starts from
torch.testing.assert_close(losses, reference_losses)
for p, q in zip(model.parameters(), untouched.parameters()):
    torch.testing.assert_close(p, q)
print("check: losses and weights equal those of a copy trained without the eval")
# --- check: end
