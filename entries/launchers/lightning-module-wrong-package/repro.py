"""Reproducer for lightning-module-wrong-package.

`python repro.py`: the model comes from code written against `pytorch_lightning` (its
class inherits `pytorch_lightning.LightningModule`), and the training script builds the
Trainer from the newer `lightning` package (`lightning.Trainer`, the same as
`lightning.pytorch.Trainer`). Both packages install side by side with the same classes
under two names, so the Trainer's `isinstance(model, LightningModule)` is false and
`trainer.fit` raises `TypeError: `model` must be a `LightningModule` or
`torch._dynamo.OptimizedModule`, got `Regressor``.
`python repro.py --fixed`: the module and the Trainer come from one package (here both
from `lightning`). The check compares the trained weights with the same training written
out in plain PyTorch.
"""

import sys
import warnings

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
warnings.filterwarnings("ignore", message=".*does not have many workers.*")  # tiny loader

import lightning as L  # noqa: E402  the training script's import
import pytorch_lightning as pl  # noqa: E402  the model code's import

if FIXED:
    # --- fix: start
    import lightning.pytorch as pl  # one package for the module and the Trainer
    # --- fix: end

STEPS, LR = 6, 0.1
g = torch.Generator().manual_seed(0)
X = torch.randn(STEPS * 8, 4, generator=g)
Y = X @ torch.randn(4, 2, generator=g) + 0.1 * torch.randn(STEPS * 8, 2, generator=g)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=8)


def make_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


class Regressor(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = make_net()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


module = Regressor()
trainer = L.Trainer(
    accelerator="cpu",
    max_epochs=1,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(module, loader)
print(f"trained {trainer.global_step} steps")

# --- check: start
reference = make_net()  # the same training in plain PyTorch
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
for x, y in loader:
    optimizer.zero_grad()
    F.mse_loss(reference(x), y).backward()
    optimizer.step()
assert trainer.global_step == STEPS, trainer.global_step  # every batch trained
torch.testing.assert_close(module.net.state_dict(), reference.state_dict(), rtol=1e-5, atol=1e-6)
print("check: the Trainer's weights equal plain PyTorch SGD over the same batches")
# --- check: end
