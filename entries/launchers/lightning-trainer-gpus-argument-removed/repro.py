"""Reproducer for lightning-trainer-gpus-argument-removed.

`python repro.py`: a training script written for Lightning 1.x builds its Trainer with
`gpus=torch.cuda.device_count()` (0 on this CPU machine, which 1.x took to mean "train on
the CPU"). Lightning 2.0 removed the argument, so Python raises `TypeError:
Trainer.__init__() got an unexpected keyword argument 'gpus'` before anything runs.
`python repro.py --fixed`: the same choice written with the 2.x arguments, `accelerator`
and `devices` (the GPUs when there are some, else the CPU). The check compares the
trained weights with the same training written out in plain PyTorch.
"""

import sys
import warnings

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
warnings.filterwarnings("ignore", message=".*does not have many workers.*")  # tiny loader

import lightning as L  # noqa: E402

STEPS, LR = 6, 0.1
g = torch.Generator().manual_seed(0)
X = torch.randn(STEPS * 8, 4, generator=g)
Y = X @ torch.randn(4, 2, generator=g) + 0.1 * torch.randn(STEPS * 8, 2, generator=g)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=8)


def make_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = make_net()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


n_gpus = torch.cuda.device_count()
device_args = {"gpus": n_gpus}  # Lightning 1.x: the number of GPUs, 0 for the CPU
if FIXED:
    # --- fix: start
    device_args = (
        {"accelerator": "gpu", "devices": n_gpus}
        if n_gpus
        else {"accelerator": "cpu", "devices": 1}
    )
    # --- fix: end

module = Regressor()
trainer = L.Trainer(
    **device_args,
    max_epochs=1,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(module, loader)
print(f"trained {trainer.global_step} steps on {trainer.strategy.root_device}")

# --- check: start
reference = make_net()  # the same training in plain PyTorch, on the CPU
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
for x, y in loader:
    optimizer.zero_grad()
    F.mse_loss(reference(x), y).backward()
    optimizer.step()
assert trainer.global_step == STEPS, trainer.global_step  # every batch trained
trained = {k: v.cpu() for k, v in module.net.state_dict().items()}
torch.testing.assert_close(trained, reference.state_dict(), rtol=1e-5, atol=1e-6)
print("check: the Trainer's weights equal plain PyTorch SGD over the same batches")
# --- check: end
