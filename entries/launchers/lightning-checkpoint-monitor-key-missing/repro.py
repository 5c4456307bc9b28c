"""Reproducer for lightning-checkpoint-monitor-key-missing.

`python repro.py`: the checkpoint callback keeps the best epoch by `monitor="val_loss"`,
but the module logs its validation loss as `valid_loss`. At the end of the first epoch
`ModelCheckpoint` looks for `val_loss` among the logged metrics, does not find it, and,
since validation did run, raises `MisconfigurationException: `ModelCheckpoint(monitor=
'val_loss')` could not find the monitored key in the returned metrics: [...]`.
`python repro.py --fixed`: the module logs the loss under the name the callback monitors.
The check trains the same model in plain PyTorch, computes the validation loss after
every epoch, and asserts that the checkpoint Lightning kept as best is that epoch, with
that score and those weights.
"""

import sys
import tempfile
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
warnings.filterwarnings("ignore", message=".*does not have many workers.*")  # tiny loaders

import lightning as L  # noqa: E402
from lightning.pytorch.callbacks import ModelCheckpoint  # noqa: E402

EPOCHS, LR = 8, 0.3
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)  # noisy: it overfits
XV, YV = torch.randn(16, 6, generator=g), torch.randn(16, 1, generator=g)
train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=8)
val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(XV, YV), batch_size=16)


def make_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))


VAL_KEY = "valid_loss"  # the name the module logs
if FIXED:
    # --- fix: start
    VAL_KEY = "val_loss"  # log it under the name ModelCheckpoint(monitor=...) asks for
    # --- fix: end


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = make_net()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log(VAL_KEY, F.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


with tempfile.TemporaryDirectory() as tmp:
    best = ModelCheckpoint(dirpath=tmp, filename="{epoch}", monitor="val_loss", mode="min")
    module = Regressor()
    trainer = L.Trainer(
        accelerator="cpu",
        max_epochs=EPOCHS,
        logger=False,
        callbacks=[best],
        num_sanity_val_steps=0,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, train, val)
    best_path = Path(best.best_model_path)
    print(f"best checkpoint: {best_path.name}, val_loss {float(best.best_model_score):.6f}")
    best_state = torch.load(best_path, map_location="cpu", weights_only=True)["state_dict"]

    # --- check: start
    reference = make_net()  # the same training in plain PyTorch
    optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
    val_losses, states = [], []
    for _ in range(EPOCHS):
        for x, y in train:
            optimizer.zero_grad()
            F.mse_loss(reference(x), y).backward()
            optimizer.step()
        with torch.no_grad():
            val_losses.append(F.mse_loss(reference(XV), YV).item())
        states.append({f"net.{k}": v.clone() for k, v in reference.state_dict().items()})
    best_epoch = min(range(EPOCHS), key=val_losses.__getitem__)
    print("reference val_loss per epoch:", [round(v, 4) for v in val_losses])
    assert best_path.name == f"epoch={best_epoch}.ckpt", (best_path.name, best_epoch)
    torch.testing.assert_close(
        float(best.best_model_score), val_losses[best_epoch], rtol=1e-5, atol=1e-7
    )
    torch.testing.assert_close(best_state, states[best_epoch], rtol=1e-5, atol=1e-6)
    print(
        f"check: the kept checkpoint is epoch {best_epoch}, the reference's lowest val_loss, with its weights"
    )
    # --- check: end
