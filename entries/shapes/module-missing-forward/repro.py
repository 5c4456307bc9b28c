"""Reproducer for module-missing-forward.

`python repro.py`: an attention layer laid out the way diffusers lays out its
`CrossAttention` since diffusers#1086 (October 2022), with the output projection held in
`to_out = nn.ModuleList([nn.Linear, nn.Dropout])`, is run by a patched attention forward
written for the older layout, where `to_out` was an `nn.Sequential` and could be called:
`attn.to_out(hidden)`. A `ModuleList` only holds layers and has no `forward`, so torch
raises `NotImplementedError: Module [ModuleList] is missing the required "forward"
function`.
`python repro.py --fixed`: the projection runs the list's layers in order. The check
recomputes the attention from the layer's weights with torch.nn.functional and compares.
"""

import sys

import torch
import torch.nn.functional as F
from torch import nn

FIXED = "--fixed" in sys.argv[1:]

torch.manual_seed(0)
DIM, TOKENS, CONTEXT = 16, 5, 7


class CrossAttention(nn.Module):
    """The layers of diffusers' CrossAttention (one head) after diffusers#1086."""

    def __init__(self, dim: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.scale = dim**-0.5
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(dim, dim), nn.Dropout(dropout)])


def project_out(attn, hidden):
    return attn.to_out(hidden)  # written when `to_out` was an nn.Sequential


if FIXED:
# --- fix: start
    def project_out(attn, hidden):
        for layer in attn.to_out:  # a ModuleList has no forward: run its layers in order
            hidden = layer(hidden)
        return hidden
# --- fix: end


def patched_attention_forward(attn, hidden, context):
    """A replacement forward of the kind paint-with-words and Attend-and-Excite install."""
    query, key, value = attn.to_q(hidden), attn.to_k(context), attn.to_v(context)
    probs = (query @ key.transpose(-1, -2) * attn.scale).softmax(dim=-1)
    return project_out(attn, probs @ value)


attn = CrossAttention(DIM).eval()  # eval: the dropout layer passes values through
hidden = torch.randn(2, TOKENS, DIM)
context = torch.randn(2, CONTEXT, DIM)
with torch.no_grad():
    output = patched_attention_forward(attn, hidden, context)
print(f"attention output {tuple(output.shape)}")

# --- check: start
# The same attention from the weights alone: projections with F.linear, attention with
# F.scaled_dot_product_attention (default scale 1/sqrt(DIM)), the output projection last.
weights = {name: tensor.detach() for name, tensor in attn.state_dict().items()}
query = F.linear(hidden, weights["to_q.weight"])
key = F.linear(context, weights["to_k.weight"])
value = F.linear(context, weights["to_v.weight"])
attended = F.scaled_dot_product_attention(query, key, value)
expected = F.linear(attended, weights["to_out.0.weight"], weights["to_out.0.bias"])
assert output.shape == (2, TOKENS, DIM), output.shape
torch.testing.assert_close(output, expected, rtol=1e-5, atol=1e-5)
print("check: attention output equals the reference computed from the layer's weights")
# --- check: end
