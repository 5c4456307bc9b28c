"""Reproducer for lr-scheduler-step-before-optimizer-step.

`python repro.py`: two training loops with a warm-up schedule (`LambdaLR`, learning rate
rising linearly over the first steps).
1. A per-epoch loop that calls `scheduler.step()` at the top of each epoch, the order of
   PyTorch releases before 1.1. The first call comes before any `optimizer.step()`, so
   torch warns `Detected call of `lr_scheduler.step()` before `optimizer.step()`` and the
   first epoch already trains with the schedule's second value.
2. A mixed-precision loop (float16 autocast, `GradScaler`) in the documented order
   (`scaler.step`, `scaler.update`, `scheduler.step`). Its first scaled gradients
   overflow float16, so the scaler skips `optimizer.step()` on those iterations, while
   the scheduler still advances: the same warning, and the first real step runs with a
   later value of the warm-up.
`python repro.py --fixed`: loop 1 steps the scheduler after the epoch's optimizer steps;
loop 2 steps it only when the scaler did not skip the optimizer step (the scale did not
drop). The check records the learning rate of every optimizer step that ran and compares
it with the schedule computed by hand, and compares loop 1's weights with plain SGD run
with those hand-computed rates.
"""

import sys

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)

BASE_LR = 0.1
WARMUP = 4


def warmup(step: int) -> float:
    return min(1.0, (step + 1) / WARMUP)


def record_lrs(optimizer: torch.optim.Optimizer) -> list:
    """The learning rate of every optimizer step that actually runs."""
    seen = []
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: seen.append(opt.param_groups[0]["lr"]))
    return seen


def train_epochs(model, optimizer, scheduler, batches, epochs):
    for _ in range(epochs):
        scheduler.step()  # pre-1.1 order: the schedule advances before this epoch's steps
        for x, y in batches:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()


def amp_step(optimizer, scheduler, scaler, loss):
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # skips optimizer.step() when the scaled gradients overflowed
    scaler.update()
    scheduler.step()


if FIXED:
    # --- fix: start
    def train_epochs(model, optimizer, scheduler, batches, epochs):
        for _ in range(epochs):
            for x, y in batches:
                optimizer.zero_grad()
                F.mse_loss(model(x), y).backward()
                optimizer.step()
            scheduler.step()  # after the epoch's optimizer steps

    def amp_step(optimizer, scheduler, scaler, loss):
        scaler.scale(loss).backward()
        scale_before = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() >= scale_before:  # a drop means optimizer.step() was skipped
            scheduler.step()
    # --- fix: end


# 1. Per-epoch schedule, plain float32 training.
X = torch.randn(64, 8)
Y = X @ torch.randn(8, 1) + 0.1 * torch.randn(64, 1)
batches = [(X[i:i + 16], Y[i:i + 16]) for i in range(0, 64, 16)]
EPOCHS = 6
model = torch.nn.Linear(8, 1)
initial = {k: v.clone() for k, v in model.state_dict().items()}
optimizer = torch.optim.SGD(model.parameters(), lr=BASE_LR)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup)
epoch_lrs = record_lrs(optimizer)
train_epochs(model, optimizer, scheduler, batches, EPOCHS)
print("loop 1, learning rate per epoch:", [round(lr, 4) for lr in epoch_lrs[::len(batches)]])

# 2. Per-step schedule, float16 autocast with a GradScaler (default init_scale 65536).
amp_model = torch.nn.Linear(8, 1)
amp_optimizer = torch.optim.SGD(amp_model.parameters(), lr=BASE_LR)
amp_scheduler = torch.optim.lr_scheduler.LambdaLR(amp_optimizer, warmup)
scaler = torch.amp.GradScaler("cpu")
amp_lrs = record_lrs(amp_optimizer)
x_amp, y_amp = torch.randn(4, 8), 5 * torch.randn(4, 1)
ITERATIONS = 8
for _ in range(ITERATIONS):
    amp_optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        out = amp_model(x_amp)
    amp_step(amp_optimizer, amp_scheduler, scaler, F.mse_loss(out.float(), y_amp))
print(f"loop 2, {len(amp_lrs)} of {ITERATIONS} optimizer steps ran, at learning rates",
      [round(lr, 4) for lr in amp_lrs])

# --- check: start
# Reference: the schedule computed by hand; the k-th optimizer step must use its k-th value.
expected_epoch_lrs = [BASE_LR * warmup(e) for e in range(EPOCHS) for _ in batches]
assert epoch_lrs == expected_epoch_lrs, (epoch_lrs, expected_epoch_lrs)
expected_amp_lrs = [BASE_LR * warmup(k) for k in range(len(amp_lrs))]
assert 0 < len(amp_lrs) < ITERATIONS, "the scaler skipped no step, so loop 2 proves nothing"
assert amp_lrs == expected_amp_lrs, (amp_lrs, expected_amp_lrs)
# The per-epoch loop trains to the weights of plain SGD with the hand-computed rates.
reference = torch.nn.Linear(8, 1)
reference.load_state_dict(initial)
for e in range(EPOCHS):
    for x, y in batches:
        reference.zero_grad()
        F.mse_loss(reference(x), y).backward()
        with torch.no_grad():
            for p in reference.parameters():
                p -= BASE_LR * warmup(e) * p.grad
torch.testing.assert_close(model.state_dict(), reference.state_dict())
print("check: every optimizer step used the schedule's value for its index, from the first")
# --- check: end
