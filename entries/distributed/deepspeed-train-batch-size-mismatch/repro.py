"""Reproducer for deepspeed-train-batch-size-mismatch.

`python repro.py`: a DeepSpeed config written for two GPUs sets all three batch sizes
(`train_batch_size` 16 = `train_micro_batch_size_per_gpu` 4 x
`gradient_accumulation_steps` 2 x 2 ranks). The job runs with one rank (CPU, gloo), so
`deepspeed.initialize` rejects the config before training: `AssertionError: Check batch
related parameters. train_batch_size is not equal to micro_batch_per_gpu *
gradient_acc_step * world_size 16 != 4 * 2 * 1`.
`python repro.py --fixed`: the config keeps the batch the run is meant to have (16
samples per optimizer step) and the micro-batch that fits a device, and leaves
`gradient_accumulation_steps` out, so DeepSpeed derives it from the world size it finds
(16 / (4 x 1) = 4 here, 2 on two ranks).
The check asserts that the engine's batch per optimizer step is the intended 16 and that
the weights it trained equal plain PyTorch taking one SGD step per batch of 16 samples.
"""

import copy
import os
import socket
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed's CPU accelerator, gloo backend

import deepspeed
import torch

FIXED = "--fixed" in sys.argv[1:]
GLOBAL_BATCH = 16  # samples per optimizer step the run was tuned for
MICRO_BATCH = 4  # samples one device holds at a time
OPTIMIZER_STEPS = 2
LR = 0.1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


os.environ.update(
    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", LOCAL_RANK="0", WORLD_SIZE="1"
)

# The config as written for a two-GPU machine: all three sizes fixed.
config = {
    "train_batch_size": GLOBAL_BATCH,
    "train_micro_batch_size_per_gpu": MICRO_BATCH,
    "gradient_accumulation_steps": 2,
    "steps_per_print": 1000,
}

if FIXED:
    # --- fix: start
    # Give the global batch and the micro-batch; DeepSpeed derives the accumulation steps
    # from the world size of this launch (train_batch / (micro_batch * world_size)).
    config.pop("gradient_accumulation_steps")
    # --- fix: end

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
initial_state = copy.deepcopy(model.state_dict())
inputs = torch.randn(OPTIMIZER_STEPS * GLOBAL_BATCH, 8)
targets = torch.randn(OPTIMIZER_STEPS * GLOBAL_BATCH, 1)

deepspeed.init_distributed(dist_backend="gloo")
engine, _, _, _ = deepspeed.initialize(
    model=model, optimizer=torch.optim.SGD(model.parameters(), lr=LR), config=config
)
samples_seen = 0
for start in range(0, len(inputs), engine.train_micro_batch_size_per_gpu()):
    x = inputs[start : start + engine.train_micro_batch_size_per_gpu()]
    y = targets[start : start + engine.train_micro_batch_size_per_gpu()]
    engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()
    samples_seen += len(x)
print(
    f"batch per optimizer step: {engine.train_batch_size()} "
    f"({engine.train_micro_batch_size_per_gpu()} x {engine.gradient_accumulation_steps()} "
    f"x {engine.world_size}); optimizer steps: {engine.global_steps}"
)

# --- check: start
assert engine.train_batch_size() == GLOBAL_BATCH, engine.train_batch_size()
assert engine.global_steps == OPTIMIZER_STEPS, engine.global_steps
assert samples_seen == len(inputs), samples_seen
reference = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
reference.load_state_dict(initial_state)
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
for step in range(OPTIMIZER_STEPS):
    batch = slice(step * GLOBAL_BATCH, (step + 1) * GLOBAL_BATCH)
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(reference(inputs[batch]), targets[batch]).backward()
    # DeepSpeed clips the gradient norm to 1.0 unless the config says otherwise.
    torch.nn.utils.clip_grad_norm_(reference.parameters(), engine.gradient_clipping())
    optimizer.step()
trained = dict(engine.module.named_parameters())
torch.testing.assert_close(trained, dict(reference.named_parameters()))
assert any(not torch.equal(trained[name], initial_state[name]) for name in trained)
print("check: each optimizer step used 16 samples, weights equal plain SGD on batches of 16")
# --- check: end
