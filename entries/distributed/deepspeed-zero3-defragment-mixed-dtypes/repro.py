"""Reproducer for deepspeed-zero3-defragment-mixed-dtypes.

`python repro.py`: a value-model set-up under DeepSpeed ZeRO stage 3 with bf16 (one CPU
rank, gloo). The backbone is built inside `deepspeed.zero.Init`, as transformers'
`from_pretrained` does under a ZeRO-3 config, so its parameters are bf16 partitions; a
value head is then added as a plain `nn.Linear`, in float32, as value-head and reward-head
wrappers do. `deepspeed.initialize` partitions the head as it is (since DeepSpeed 0.19.2
the engine does not cast the parameters of a model built under `zero.Init`), and the
ZeRO-3 optimizer's `defragment`, which copies every trainable partition into one flat
buffer, stops on `assert len(set(t.dtype for t in tensors)) == 1`.
`python repro.py --fixed`: the head is cast to bf16 before `deepspeed.initialize`, so every
trainable parameter has the dtype DeepSpeed trains in. The check trains five steps and
compares the weights with the same training done without DeepSpeed: bf16 weights for the
forward and backward passes, a float32 master copy updated by `torch.optim.AdamW` and
rounded back to bf16, which is what DeepSpeed's bf16 mode does.
"""

import os
import socket
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import deepspeed
import torch
from deepspeed.utils import safe_get_full_fp32_param

FIXED = "--fixed" in sys.argv[1:]
LR, WEIGHT_DECAY, STEPS = 1e-2, 0.01, 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


os.environ.update(
    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1"
)


class Backbone(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16)
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.embed(tokens)).mean(dim=1)


class ValueModel(torch.nn.Module):
    def __init__(self, backbone: torch.nn.Module, v_head: torch.nn.Module) -> None:
        super().__init__()
        self.backbone, self.v_head = backbone, v_head

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.v_head(self.backbone(tokens)).squeeze(-1)


config = {
    "train_micro_batch_size_per_gpu": 4,
    "bf16": {"enabled": True},
    "optimizer": {
        "type": "AdamW",
        "params": {"lr": LR, "weight_decay": WEIGHT_DECAY, "torch_adam": True},
    },
    # Clipping off (0.19.8 defaults to 1.0) so the reference below needs no global norm.
    "gradient_clipping": 0.0,
    "zero_optimization": {"stage": 3},
    "steps_per_print": 1000,
}
deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)
with deepspeed.zero.Init(config_dict_or_path=config):
    backbone = Backbone()  # bf16 partitions, as a pretrained model loaded under ZeRO-3
model = ValueModel(backbone, torch.nn.Linear(16, 1))  # the head is created in float32

if FIXED:
    # --- fix: start
    # ZeRO-3 packs every trainable partition into one flat buffer of one dtype:
    # give the head the dtype DeepSpeed trains in before deepspeed.initialize.
    model.v_head.to(torch.bfloat16)
    # --- fix: end

print(
    "trainable dtypes:", {n: str(p.dtype) for n, p in model.named_parameters() if p.requires_grad}
)
engine, _, _, _ = deepspeed.initialize(
    model=model, model_parameters=model.parameters(), config=config
)

with deepspeed.zero.GatheredParameters(list(engine.module.parameters())):
    initial = {name: p.detach().clone() for name, p in engine.module.named_parameters()}
generator = torch.Generator().manual_seed(1)
batches = [
    (torch.randint(0, 32, (4, 6), generator=generator), torch.randn(4, generator=generator))
    for _ in range(STEPS)
]
for step, (tokens, target) in enumerate(batches):
    loss = torch.nn.functional.mse_loss(engine(tokens).float(), target)
    engine.backward(loss)
    engine.step()
    print(f"step {step}: loss {loss.item():.4f}")

# --- check: start
with deepspeed.zero.GatheredParameters(list(engine.module.parameters())):
    trained = {name: p.detach().clone() for name, p in engine.module.named_parameters()}
masters = {
    name: safe_get_full_fp32_param(p).clone() for name, p in engine.module.named_parameters()
}

# The same training without DeepSpeed: bf16 weights, float32 master weights, AdamW.
reference = ValueModel(Backbone(), torch.nn.Linear(16, 1)).to(torch.bfloat16)
reference.load_state_dict(initial)
weights = dict(reference.named_parameters())
fp32 = {name: p.detach().float().clone().requires_grad_() for name, p in weights.items()}
optimizer = torch.optim.AdamW(fp32.values(), lr=LR, weight_decay=WEIGHT_DECAY)
for tokens, target in batches:
    torch.nn.functional.mse_loss(reference(tokens).float(), target).backward()
    for name, p in weights.items():
        fp32[name].grad, p.grad = p.grad.float(), None
    optimizer.step()
    optimizer.zero_grad()
    with torch.no_grad():
        for name, p in weights.items():
            p.copy_(fp32[name])

assert {p.dtype for p in trained.values()} == {torch.bfloat16}
# Same bf16 forward/backward and the same element-wise AdamW update, on one flat buffer in
# DeepSpeed and per tensor here: the float32 masters may differ by rounding only, and a
# rounding difference can move a bf16 weight by one bf16 step (2**-7 relative at most).
torch.testing.assert_close(masters, {n: p.detach() for n, p in fp32.items()}, rtol=1e-5, atol=1e-6)
torch.testing.assert_close(
    trained, {n: p.detach() for n, p in weights.items()}, rtol=2**-7, atol=1e-6
)
for name in trained:  # every parameter, the head included, was trained (moved ~0.04)
    assert (trained[name].float() - initial[name].float()).abs().max() > 0.01, name
print(f"check: {len(trained)} bf16 parameters after {STEPS} steps equal training without DeepSpeed")
# --- check: end
