"""Reproducer for lightning-no-gpu-backend.

`python repro.py`: a Lightning training script hard-codes `Trainer(accelerator="gpu",
devices=1)`, as most published configs do, and runs where torch sees no GPU: this CPU
machine stands for any such process (a CPU-only torch wheel, a missing driver, an empty
`CUDA_VISIBLE_DEVICES`, a job without a GPU). The Trainer looks for a GPU backend, finds
neither CUDA nor MPS, and raises `MisconfigurationException: No supported gpu backend
found!` before training starts.
`python repro.py --fixed`: the Trainer uses the accelerator the machine has
(`accelerator="auto"`: CUDA or MPS where torch sees one, else the CPU). On a GPU machine
the real fix is to give torch the GPU (a CUDA build, the driver, the device visible);
this CPU run shows that the script then trains. The check compares the trained weights
with the same training written out in plain PyTorch.
"""

import sys
import warnings

import torch
import torch.nn.functional as F

FIXED = "--fixed" in sys.argv[1:]
warnings.filterwarnings("ignore", message=".*does not have many workers.*")  # tiny loader

import lightning as L  # noqa: E402

ACCELERATOR = "gpu"  # as the published config says
if FIXED:
    # --- fix: start
    ACCELERATOR = "auto"  # the accelerator this machine has: CUDA or MPS if torch sees one, else CPU
    # --- fix: end

STEPS, LR = 8, 0.1
g = torch.Generator().manual_seed(0)
X = torch.randn(STEPS * 16, 6, generator=g)
Y = X @ torch.randn(6, 2, generator=g) + 0.1 * torch.randn(STEPS * 16, 2, generator=g)


def make_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = make_net()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=16)
module = Regressor()
trainer = L.Trainer(
    accelerator=ACCELERATOR, devices=1, max_epochs=1, logger=False,
    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
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
