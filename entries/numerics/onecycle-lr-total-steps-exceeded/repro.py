"""Reproducer for onecycle-lr-total-steps-exceeded.

`python repro.py`: a training loop steps `OneCycleLR` after every batch, but sized it
with `steps_per_epoch = len(dataset) // batch_size`, as if the loader dropped the last,
short batch. It does not (`drop_last=False`), so each epoch has one step more than the
schedule was told; in the third epoch the scheduler runs past its end and raises
`ValueError: Tried to step 19 times. The specified number of total steps is 18`.
`python repro.py --fixed`: the schedule is sized from the loader itself
(`steps_per_epoch=len(loader)`). The check computes the one-cycle learning rates from
their formula for every batch and compares them with the ones the optimizer used.
"""

import math
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv[1:]

N, BATCH, EPOCHS, MAX_LR = 50, 8, 3, 0.1
g = torch.Generator().manual_seed(0)
dataset = TensorDataset(torch.randn(N, 4, generator=g), torch.randn(N, 1, generator=g))
loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=g)  # keeps the short batch

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=MAX_LR, momentum=0.9)
steps_per_epoch = len(dataset) // BATCH  # 6, but the loader yields 7 batches
if FIXED:
    # --- fix: start
    steps_per_epoch = len(loader)  # the batches the loop really steps on
    # --- fix: end
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=MAX_LR, epochs=EPOCHS, steps_per_epoch=steps_per_epoch
)

used_lrs = []
for _ in range(EPOCHS):
    for x, y in loader:
        used_lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step()
print(
    f"{len(used_lrs)} steps, lr from {used_lrs[0]:.5f} up to {max(used_lrs):.5f} down to {used_lrs[-1]:.7f}"
)

# --- check: start
total = EPOCHS * math.ceil(N / BATCH)  # every batch of every epoch, counted from the data
initial_lr, pct_start = MAX_LR / 25.0, 0.3  # OneCycleLR's defaults: div_factor, pct_start
min_lr = initial_lr / 1e4  # final_div_factor
peak = pct_start * total - 1


def one_cycle(step: int) -> float:
    """The documented schedule: cosine up from initial_lr to max_lr, then down to min_lr."""
    if step <= peak:
        start, end, pct = initial_lr, MAX_LR, step / peak
    else:
        start, end, pct = MAX_LR, min_lr, (step - peak) / (total - 1 - peak)
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


reference = [one_cycle(step) for step in range(total)]
assert len(used_lrs) == total, (len(used_lrs), total)  # every batch trained
torch.testing.assert_close(used_lrs, reference, rtol=1e-9, atol=1e-12)
assert abs(used_lrs[-1] - min_lr) < 1e-12  # the cycle ends exactly on the last batch
print(
    f"check: all {total} learning rates follow the one-cycle formula, ending at min_lr on the last batch"
)
# --- check: end
