"""Reproducer for deepspeed-zero3-empty-param-group.

`python repro.py`: a fine-tuning script builds its optimizer's parameter groups (weights
with weight decay, biases and norms without) while the whole model is still trainable,
then switches to LoRA: every backbone weight is frozen and low-rank adapters are added.
The groups handed to `deepspeed.initialize` (ZeRO stage 3, parameters offloaded to the
CPU, one CPU rank with gloo) therefore hold no parameter that requires a gradient.
ZeRO-3 leaves out every group without a trainable parameter, is left with none, and
fails while sizing its optimizer state (`initialize_optimizer_states` in
deepspeed/runtime/zero/stage3.py):
`largest_numel = max([sum([p.ds_numel for p in psg]) for psg in self.fp16_partitioned_groups])`
`ValueError: max() arg is an empty sequence`.
`python repro.py --fixed`: the groups are built after the adapters are added, from the
parameters that require a gradient only, and a group left empty is dropped.
The check trains three steps and compares every parameter with the same model trained
by a plain `torch.optim.AdamW` over the same groups on the same batches (no DeepSpeed):
the adapters equal the reference's and have moved, the frozen backbone is unchanged.
"""

import os
import socket
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import deepspeed
import torch

FIXED = "--fixed" in sys.argv[1:]
LR, WEIGHT_DECAY, BATCH, STEPS = 1e-2, 0.01, 8, 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


os.environ.update(
    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1"
)


class LoRALinear(torch.nn.Module):
    """A frozen linear layer plus a trainable low-rank update."""

    def __init__(self, base: torch.nn.Linear, rank: int = 2) -> None:
        super().__init__()
        self.base = base
        self.lora_a = torch.nn.Linear(base.in_features, rank, bias=False)
        self.lora_b = torch.nn.Linear(rank, base.out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.lora_b(self.lora_a(x))


def build_model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.GELU(), torch.nn.Linear(16, 4)
    )


def add_lora(model: torch.nn.Sequential) -> None:
    """Freeze the backbone and wrap both linear layers with adapters."""
    model.requires_grad_(False)
    torch.manual_seed(1)
    model[0], model[3] = LoRALinear(model[0]), LoRALinear(model[3])


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(100 + step)
    return torch.randn(BATCH, 8, generator=generator), torch.randn(BATCH, 4, generator=generator)


model = build_model()
groups = [  # built for full fine-tuning, before the switch to LoRA
    {"params": [p for p in model.parameters() if p.ndim >= 2], "weight_decay": WEIGHT_DECAY},
    {"params": [p for p in model.parameters() if p.ndim < 2], "weight_decay": 0.0},
]
add_lora(model)

if FIXED:
    # --- fix: start
    def param_groups(model: torch.nn.Module) -> list[dict]:
        """Weight decay on matrices, none on biases and norms; trainable parameters only."""
        trainable = [p for p in model.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in trainable if p.ndim >= 2], "weight_decay": WEIGHT_DECAY},
            {"params": [p for p in trainable if p.ndim < 2], "weight_decay": 0.0},
        ]
        return [group for group in groups if group["params"]]

    groups = param_groups(model)  # after the backbone is frozen and the adapters added
    # --- fix: end

print(
    "trainable parameters in the optimizer's groups:",
    sum(p.requires_grad for g in groups for p in g["params"]),
)

initial = {name: p.detach().clone() for name, p in model.named_parameters()}
config = {
    "train_micro_batch_size_per_gpu": BATCH,
    "optimizer": {
        "type": "AdamW",
        "params": {"lr": LR, "weight_decay": WEIGHT_DECAY, "torch_adam": True},
    },
    "gradient_clipping": 0.0,  # DeepSpeed clips at 1.0 unless told; the reference does not clip
    "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}},
    "steps_per_print": 1000,
}
deepspeed.init_distributed(dist_backend="gloo")
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=groups, config=config)
for step in range(STEPS):
    x, y = batch(step)
    engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()
with deepspeed.zero.GatheredParameters(list(engine.module.parameters())):
    trained = {name: p.detach().clone() for name, p in engine.module.named_parameters()}
print("trained", STEPS, "steps; parameters:", len(trained))

# --- check: start
reference = build_model()
add_lora(reference)
trainable = [p for p in reference.parameters() if p.requires_grad]
reference_groups = [
    {"params": [p for p in trainable if p.ndim >= 2], "weight_decay": WEIGHT_DECAY},
    {"params": [p for p in trainable if p.ndim < 2], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW([g for g in reference_groups if g["params"]], lr=LR)
for step in range(STEPS):
    x, y = batch(step)
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(reference(x), y).backward()
    optimizer.step()
expected = {name: p.detach() for name, p in reference.named_parameters()}
torch.testing.assert_close(trained, expected)
for name, param in reference.named_parameters():
    if param.requires_grad:
        assert not torch.equal(trained[name], initial[name]), f"{name} was not trained"
    else:
        torch.testing.assert_close(trained[name], initial[name], rtol=0, atol=0)
print("check: adapters equal plain AdamW's after", STEPS, "steps; the frozen backbone is unchanged")
# --- check: end
