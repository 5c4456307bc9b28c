"""Reproducer for peft-loraconfig-unexpected-argument.

`python repro.py`: a LoRA fine-tuning script for a mixture-of-experts model adapts the
experts' stacked weight, a 3-d `nn.Parameter` and not an `nn.Linear`, the way MoE recipes
written for PEFT 0.17 and later do (gpt-oss, Llama 4): `LoraConfig(target_modules=[],
target_parameters=["experts.gate_up_proj"], ...)`. The environment has PEFT 0.15.2
(installed apart: reproducer.private_requirements, first on `sys.path`), whose
`LoraConfig` dataclass has no `target_parameters` field, so its generated `__init__`
raises `TypeError: LoraConfig.__init__() got an unexpected keyword argument
'target_parameters'` before any adapter is built.
`python repro.py --fixed`: PEFT is upgraded (`python -m pip install -U peft`): here the
0.15.2 folder is taken off the path, leaving the installed 0.21.2, whose `LoraConfig`
has the field. The same config is built unchanged.
The check confirms the argument took effect: the experts' weight is wrapped and carries
one rank-r pair per expert, the adapter changes the output, and the adapted model's
output equals `x @ (W_e + alpha / r * B_e A_e)` for each token's expert `e`, computed by
hand from the adapter's own `lora_A` and `lora_B` matrices (expert `e`'s block of each).
"""

import os
import sys

import torch
from torch import nn

# PEFT 0.15.2, installed apart (reproducer.private_requirements): the release the
# environment has, first on the path.
OLD_PEFT = os.path.join(sys.prefix, "failpedia-private", "peft-0.15.2")
sys.path.insert(0, OLD_PEFT)

FIXED = "--fixed" in sys.argv[1:]

if FIXED:
    # --- fix: start
    # Upgrade PEFT to a release whose LoraConfig has the argument (target_parameters:
    # 0.17.0 and later):  $ python -m pip install -U peft
    # Here: the 0.15.2 folder leaves the path; the installed 0.21.2 is imported instead.
    sys.path.remove(OLD_PEFT)
    # --- fix: end

import peft  # noqa: E402
from peft import LoraConfig, get_peft_model  # noqa: E402

print(f"peft {peft.__version__}, torch {torch.__version__}")

N_EXPERTS, D_IN, D_OUT, RANK, ALPHA = 4, 16, 24, 2, 4


class Experts(nn.Module):
    """Experts stored as one stacked weight (experts, in, out), as MoE models keep them."""

    def __init__(self) -> None:
        super().__init__()
        self.gate_up_proj = nn.Parameter(torch.randn(N_EXPERTS, D_IN, D_OUT) / D_IN**0.5)

    def forward(self, x: torch.Tensor, expert: torch.Tensor) -> torch.Tensor:
        weight = self.gate_up_proj[expert]  # (tokens, in, out): each token's expert
        return torch.bmm(x.unsqueeze(1), weight).squeeze(1)


class MoEBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Linear(D_IN, N_EXPERTS)
        self.experts = Experts()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        expert = self.router(x).argmax(dim=-1)  # top-1 routing
        return self.experts(x, expert)


torch.manual_seed(0)
model = MoEBlock()
base_weight = model.experts.gate_up_proj.detach().clone()
x = torch.randn(32, D_IN)
with torch.no_grad():
    routed = model.router(x).argmax(dim=-1)
    base_out = model(x)

config = LoraConfig(
    r=RANK,
    lora_alpha=ALPHA,
    target_modules=[],  # no nn.Linear: only the experts' parameter is adapted
    target_parameters=["experts.gate_up_proj"],
    init_lora_weights=False,  # random B as well as A, so the adapter is not a no-op
)
peft_model = get_peft_model(model, config)
peft_model.print_trainable_parameters()
with torch.no_grad():
    lora_out = peft_model(x)
print(f"adapted output: max |change| from the base model {(lora_out - base_out).abs().max():.4f}")

# --- check: start
wrapped = peft_model.base_model.model.experts
lora_A = wrapped.lora_A["default"].weight.detach()  # (experts * r, out)
lora_B = wrapped.lora_B["default"].weight.detach()  # (in, r * experts)
assert lora_A.shape == (N_EXPERTS * RANK, D_OUT), lora_A.shape
assert lora_B.shape == (D_IN, RANK * N_EXPERTS), lora_B.shape
trainable = {n for n, p in peft_model.named_parameters() if p.requires_grad}
assert all(".lora_A." in n or ".lora_B." in n for n in trainable) and len(trainable) == 2, trainable
# By hand: expert e's rows of A are e*r .. e*r+r-1; its columns of B are e, e+E, e+2E, ...
scale = ALPHA / RANK
reference = torch.empty_like(base_out)
for e in range(N_EXPERTS):
    a_e = lora_A[e * RANK : (e + 1) * RANK]  # (r, out)
    b_e = lora_B[:, e::N_EXPERTS]  # (in, r)
    w_e = base_weight[e] + scale * b_e @ a_e  # (in, out), as the stacked weight stores it
    rows = routed == e
    reference[rows] = x[rows] @ w_e
assert len(set(routed.tolist())) > 1, routed  # several experts are exercised
assert (lora_out - base_out).abs().max() > 1e-2  # the adapter changes the output
torch.testing.assert_close(lora_out, reference, rtol=1e-5, atol=1e-5)
torch.testing.assert_close(wrapped.get_param(), base_weight)  # the base weight is untouched
print("check: each token's output equals x @ (W_e + alpha/r * B_e A_e), computed by hand")
# --- check: end
