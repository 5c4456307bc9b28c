"""Reproducer for lightning-epoch-end-hooks-removed.

`python repro.py`: a LightningModule written for Lightning 1.x averages its training
losses in `training_epoch_end(self, outputs)`, the hook that received every step's
return value. Lightning 2.x no longer calls it: `trainer.fit` checks the module before
training and raises `NotImplementedError: Support for `training_epoch_end` has been
removed in v2.0.0`.
`python repro.py --fixed`: the module keeps the step losses itself (a list filled in
`training_step`) and averages them in `on_train_epoch_end`, clearing the list for the
next epoch. The check compares each epoch's mean loss, and the trained weights, with
the same training written out in plain PyTorch.
"""

import sys
import warnings

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
warnings.filterwarnings("ignore", message=".*does not have many workers.*")  # tiny loader

import lightning as L  # noqa: E402

EPOCHS, BATCHES, LR = 3, 4, 0.1
g = torch.Generator().manual_seed(0)
X = torch.randn(BATCHES * 8, 5, generator=g)
Y = X @ torch.randn(5, 1, generator=g) + 0.1 * torch.randn(BATCHES * 8, 1, generator=g)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=8)


def make_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = make_net()
        self.epoch_losses: list[float] = []  # the mean training loss of each epoch

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def training_epoch_end(self, outputs):  # Lightning 1.x: every step's return value
        self.epoch_losses.append(torch.stack([o["loss"] for o in outputs]).mean().item())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


if FIXED:
    # --- fix: start
    class Regressor(L.LightningModule):  # type: ignore[no-redef]
        """The 2.x form: the module keeps its step losses and reduces them itself."""

        def __init__(self) -> None:
            super().__init__()
            self.net = make_net()
            self.epoch_losses: list[float] = []
            self.step_losses: list[torch.Tensor] = []

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.mse_loss(self.net(x), y)
            self.step_losses.append(loss.detach())
            return loss

        def on_train_epoch_end(self) -> None:  # replaces training_epoch_end(outputs)
            self.epoch_losses.append(torch.stack(self.step_losses).mean().item())
            self.step_losses.clear()  # free the epoch's outputs

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=LR)

    # --- fix: end

module = Regressor()
trainer = L.Trainer(
    accelerator="cpu",
    max_epochs=EPOCHS,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(module, loader)
print("epoch mean losses:", [round(v, 6) for v in module.epoch_losses])

# --- check: start
reference = make_net()  # the same training in plain PyTorch
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
expected = []
for _ in range(EPOCHS):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(reference(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    expected.append(torch.stack(losses).mean().item())
assert trainer.global_step == EPOCHS * BATCHES, trainer.global_step  # every batch trained
assert len(module.epoch_losses) == EPOCHS, module.epoch_losses  # the hook ran once an epoch
torch.testing.assert_close(module.epoch_losses, expected, rtol=1e-5, atol=1e-7)
torch.testing.assert_close(module.net.state_dict(), reference.state_dict(), rtol=1e-5, atol=1e-6)
print("check: each epoch's mean loss and the weights equal plain PyTorch over the same batches")
# --- check: end
