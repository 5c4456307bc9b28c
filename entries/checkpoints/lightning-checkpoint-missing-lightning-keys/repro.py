"""Reproducer for lightning-checkpoint-missing-lightning-keys.

`python repro.py`: a regressor is trained in plain PyTorch and its weights are saved the
plain way, `torch.save(net.state_dict(), path)`. The evaluation script wraps the same
network in a LightningModule (as `self.net`) and hands the file to
`Trainer.validate(module, loader, ckpt_path=path)`. Lightning treats `ckpt_path` as one of
its own checkpoints, reads its version first to migrate it, and raises
`KeyError: 'pytorch-lightning_version'`.
`python repro.py --fixed`: the weights are loaded into the module with `load_state_dict`
(keys given the `net.` prefix of the attribute that holds the network), and the module is
validated without `ckpt_path`. Then `trainer.save_checkpoint` writes a real Lightning
checkpoint, which a fresh module restores through `ckpt_path`. The check recomputes the
validation loss by hand with the plain network on the same data, and compares every
parameter with the saved one.
"""

import logging
import sys
import tempfile
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
warnings.filterwarnings("ignore", message=".*does not have many workers.*")  # tiny loaders

import lightning as L  # noqa: E402

for name in ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero"):
    # keep Lightning's tips about other packages to install out of the output
    logging.getLogger(name).addFilter(lambda record: "Tip:" not in record.getMessage())

g = torch.Generator().manual_seed(0)
X, Y = torch.randn(64, 6, generator=g), torch.randn(64, 1, generator=g)
XV, YV = torch.randn(20, 6, generator=g), torch.randn(20, 1, generator=g)
val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(XV, YV), batch_size=10)


def make_net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = make_net()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.net(x), y))


def make_trainer() -> L.Trainer:
    return L.Trainer(
        accelerator="cpu", logger=False, enable_progress_bar=False, enable_model_summary=False
    )


with tempfile.TemporaryDirectory() as tmp:
    # training outside Lightning: a plain loop, then the usual plain save
    torch.manual_seed(0)
    trained = make_net()
    optimizer = torch.optim.SGD(trained.parameters(), lr=0.1)
    for _ in range(20):
        optimizer.zero_grad()
        F.mse_loss(trained(X), Y).backward()
        optimizer.step()
    weights = Path(tmp) / "net_weights.pt"
    torch.save(trained.state_dict(), weights)

    # evaluation through Lightning
    torch.manual_seed(1)  # the module starts from other weights than the trained ones
    module = Regressor()
    ckpt_path = weights  # a plain state_dict handed to Lightning as its checkpoint
    if FIXED:
        # --- fix: start
        state = torch.load(weights, map_location="cpu", weights_only=True)
        module.load_state_dict({f"net.{key}": value for key, value in state.items()})
        ckpt_path = None  # the weights are in the module; nothing for Lightning to restore
        # --- fix: end
    trainer = make_trainer()
    reported = trainer.validate(module, val, ckpt_path=ckpt_path, verbose=False)[0]["val_loss"]
    print(f"Lightning val_loss: {reported:.6f}")

    # a checkpoint Lightning wrote itself restores through ckpt_path
    lightning_ckpt = Path(tmp) / "regressor.ckpt"
    trainer.save_checkpoint(lightning_ckpt)
    torch.manual_seed(2)
    fresh = Regressor()
    restored = make_trainer().validate(
        fresh, val, ckpt_path=lightning_ckpt, weights_only=True, verbose=False
    )
    print(f"val_loss after restoring {lightning_ckpt.name}: {restored[0]['val_loss']:.6f}")

    # --- check: start
    with torch.no_grad():
        by_hand = F.mse_loss(trained(XV), YV).item()  # the plain network on the same data
    print(f"val_loss by hand with the plain network: {by_hand:.6f}")
    torch.testing.assert_close(reported, by_hand, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(restored[0]["val_loss"], by_hand, rtol=1e-6, atol=1e-7)
    saved = torch.load(weights, map_location="cpu", weights_only=True)
    for loaded_module in (module, fresh):
        loaded = loaded_module.net.state_dict()
        assert loaded.keys() == saved.keys(), (loaded.keys(), saved.keys())
        for name, tensor in saved.items():
            assert torch.equal(loaded[name], tensor), name
    print(
        "check: Lightning's val_loss equals the plain network's, and every parameter equals the saved one"
    )
    # --- check: end
