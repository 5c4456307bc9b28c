"""Reproducer for dynamo-data-dependent-guard.

`python repro.py`: a mixture-of-experts layer routes each token to one expert and, as
many MoE implementations do, skips an expert that received no tokens:
`if idx.shape[0] == 0: continue`. The number of tokens per expert comes from
`torch.nonzero`, so while `torch.export.export` traces it is an unbacked symbol `u0`
with no known value, and the `if` needs its value. Export stops with
`GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 0)`.
`python repro.py --fixed`: the skip is removed. Indexing, the expert and `index_add` all
accept an empty index, so one graph handles any number of tokens per expert; the exported
program matches eager, also on an input where an expert gets no tokens.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class MoE(nn.Module):
    def __init__(self, dim: int = 8, n_experts: int = 4) -> None:
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_experts))

    def expert_out(self, x: torch.Tensor, out: torch.Tensor, i: int, idx: torch.Tensor) -> torch.Tensor:
        if idx.shape[0] == 0:  # data-dependent: needs the value of u0
            return out
        return out.index_add(0, idx, self.experts[i](x[idx]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        choice = self.router(x).argmax(dim=-1)
        out = torch.zeros_like(x)
        for i in range(len(self.experts)):
            idx = torch.nonzero(choice == i).squeeze(-1)  # size known only at run time
            out = self.expert_out(x, out, i, idx)
        return out


Model = MoE
if FIXED:
    # --- fix: start
    class ExportableMoE(MoE):
        def expert_out(self, x: torch.Tensor, out: torch.Tensor, i: int, idx: torch.Tensor) -> torch.Tensor:
            # No branch on the token count: an empty `idx` selects nothing and adds nothing.
            return out.index_add(0, idx, self.experts[i](x[idx]))

    Model = ExportableMoE
    # --- fix: end


torch.manual_seed(0)
model = Model().eval()
x = torch.randn(16, 8)

exported = torch.export.export(model, (x,))
print("exported:", len(exported.graph.nodes), "nodes")

# --- check: start
reference = MoE().eval()  # the original layer, run eagerly, with the same weights
reference.load_state_dict(model.state_dict())
pool = torch.randn(256, 8)
no_expert_0 = pool[reference.router(pool).argmax(dim=-1) != 0][:16]  # expert 0 gets no tokens
with torch.no_grad():
    for tokens in (x, no_expert_0):
        torch.testing.assert_close(exported.module()(tokens), reference(tokens))
print("check: exported program equals the eager layer, also when an expert gets no tokens")
# --- check: end
