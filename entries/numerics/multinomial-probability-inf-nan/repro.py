"""Reproducer for multinomial-probability-inf-nan.

`python repro.py`: a small causal language model, whose MLP writes one outlier channel of
about 8e4 into the residual stream (beyond float16's largest value, 65504; every weight
is small), is loaded in float16
to sample the next token as `generate(do_sample=True)` does: top-k filtering, softmax,
`torch.multinomial`. The MLP's output overflows to `inf`, the layer norm turns it into
`nan`, every logit and probability is `nan`, and `torch.multinomial` raises
`RuntimeError: probability tensor contains either `inf`, `nan` or element < 0`.
`python repro.py --fixed`: the model is loaded in float32, whose range holds the outlier, and
the sampled tokens follow the probabilities computed in float64.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
VOCAB, WIDTH, TOP_K, TEMPERATURE = 32, 64, 5, 0.7


class TinyLM(nn.Module):
    """Embedding, one MLP block on the residual stream, final layer norm, LM head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.up = nn.Linear(WIDTH, 4 * WIDTH)
        self.down = nn.Linear(4 * WIDTH, WIDTH)
        self.norm = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(ids)
        hidden = hidden + self.down(nn.functional.gelu(self.up(hidden)))
        return self.lm_head(self.norm(hidden))[:, -1]  # next-token logits


model = TinyLM().eval()
with torch.no_grad():  # the checkpoint's outlier: channel 0 of the MLP output sums to ~8e4
    model.up.bias.fill_(20.0)
    model.down.weight[0].fill_(16.0)
reference_model = TinyLM().eval()
reference_model.load_state_dict(model.state_dict())
reference_model.double()  # the float64 reference the check compares with

dtype = torch.float16  # from_pretrained(..., torch_dtype=torch.float16)
if FIXED:
# --- fix: start
    dtype = torch.float32  # or torch.bfloat16: both hold activations beyond 65504
# --- fix: end
model = model.to(dtype)


def next_token_probs(net: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """Sampling as generate(do_sample=True, top_k, temperature) does it."""
    with torch.no_grad():
        logits = net(ids) / TEMPERATURE
    kth = torch.topk(logits, TOP_K, dim=-1).values[:, -1:]
    logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


prompt = torch.tensor([[3, 14, 15, 9, 2, 6]])
probs = next_token_probs(model, prompt)
with torch.no_grad():
    print(f"next-token logits finite: {bool(torch.isfinite(model(prompt)).all())}")
generator = torch.Generator().manual_seed(1)
samples = torch.multinomial(probs.expand(20000, VOCAB), num_samples=1, generator=generator)[:, 0]
print(f"sampled {samples.numel()} next tokens")

# --- check: start
# Reference: the same weights and prompt in float64.
expected = next_token_probs(reference_model, prompt)[0]
torch.testing.assert_close(probs[0].double(), expected, atol=1e-5, rtol=1e-4)
support = set(torch.nonzero(expected).flatten().tolist())
assert len(support) == TOP_K, support
assert set(samples.tolist()) <= support, "a token outside the top-k was sampled"
frequencies = torch.bincount(samples, minlength=VOCAB).double() / samples.numel()
torch.testing.assert_close(frequencies, expected, atol=0.015, rtol=0)
print(f"check: probabilities equal the float64 reference; samples cover the top-{TOP_K} tokens {sorted(support)} at their probabilities")
# --- check: end
