"""Reproducer for deepspeed-zero-no-sync.

`python repro.py`: a training loop ported from DDP accumulates gradients over two
micro-batches per optimizer step and wraps every micro-batch but the last in
`engine.no_sync()`, as one does with `DistributedDataParallel.no_sync()` (and as
accelerate's `accumulate()` does for DeepSpeed models). The model runs under DeepSpeed
ZeRO stage 3 (one CPU rank, gloo). `DeepSpeedEngine.no_sync` refuses any ZeRO stage that
partitions gradients (2 and 3): `AssertionError: no_sync context manager is incompatible
with gradient partitioning logic of ZeRO stage 3`.
`python repro.py --fixed`: no `no_sync`. Every micro-batch goes through
`engine.backward(loss)` and `engine.step()`; the engine counts micro-batches against
`gradient_accumulation_steps` and only reduces, partitions and applies the gradients at
the accumulation boundary.
The check compares the weights DeepSpeed trained (gathered from their ZeRO-3 partitions)
with a plain PyTorch run on the same micro-batches (gradients of the loss divided by the
accumulation steps, summed, one Adam step per two micro-batches).
"""

import contextlib
import copy
import os
import socket
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import deepspeed
import torch

FIXED = "--fixed" in sys.argv[1:]
ACCUMULATION_STEPS = 2
OPTIMIZER_STEPS = 3
LR = 1e-2
GRADIENT_CLIPPING = 1.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


os.environ.update(
    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1"
)


def loss_fn(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.mse_loss(output, target)


def train_step(engine, micro_batches) -> None:
    # DDP habit: skip the gradient all-reduce on every micro-batch but the last.
    for index, (x, y) in enumerate(micro_batches):
        last = index == len(micro_batches) - 1
        with contextlib.nullcontext() if last else engine.no_sync():
            engine.backward(loss_fn(engine(x), y))
        engine.step()


if FIXED:
    # --- fix: start
    def train_step(engine, micro_batches) -> None:
        # DeepSpeed accumulates by itself: backward and step on every micro-batch; the
        # engine applies the update only at the gradient_accumulation_steps boundary.
        for x, y in micro_batches:
            engine.backward(loss_fn(engine(x), y))
            engine.step()

    # --- fix: end


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
initial_state = copy.deepcopy(model.state_dict())
batches = [
    (torch.randn(4, 8), torch.randn(4, 1)) for _ in range(OPTIMIZER_STEPS * ACCUMULATION_STEPS)
]

config = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": ACCUMULATION_STEPS,
    "optimizer": {"type": "Adam", "params": {"lr": LR, "weight_decay": 0.0, "torch_adam": True}},
    "gradient_clipping": GRADIENT_CLIPPING,
    "zero_optimization": {"stage": 3},
    "steps_per_print": 1000,
}
deepspeed.init_distributed(dist_backend="gloo")
engine, _, _, _ = deepspeed.initialize(
    model=model, model_parameters=model.parameters(), config=config
)
for step in range(OPTIMIZER_STEPS):
    train_step(engine, batches[step * ACCUMULATION_STEPS : (step + 1) * ACCUMULATION_STEPS])
print(f"optimizer steps taken: {engine.global_steps}")

# --- check: start
reference = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
reference.load_state_dict(initial_state)
optimizer = torch.optim.Adam(reference.parameters(), lr=LR)
for step in range(OPTIMIZER_STEPS):
    optimizer.zero_grad()
    for x, y in batches[step * ACCUMULATION_STEPS : (step + 1) * ACCUMULATION_STEPS]:
        (loss_fn(reference(x), y) / ACCUMULATION_STEPS).backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), GRADIENT_CLIPPING)  # as the engine clips
    optimizer.step()
assert engine.global_steps == OPTIMIZER_STEPS, engine.global_steps
with deepspeed.zero.GatheredParameters(list(engine.module.parameters())):
    trained = {name: param.detach().clone() for name, param in engine.module.named_parameters()}
torch.testing.assert_close(trained, dict(reference.named_parameters()))
assert any(not torch.equal(trained[name], initial_state[name]) for name in trained)
print(
    "check: ZeRO-3 weights after accumulated steps equal plain PyTorch with the same accumulation"
)
# --- check: end
