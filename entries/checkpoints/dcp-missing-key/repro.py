"""Reproducer for dcp-missing-key.

A training loop saves checkpoints with torch.distributed.checkpoint (DCP) the way the
PyTorch docs show: `get_state_dict(model, optimizer)` gives the model's and the
optimizer's state keyed by parameter names (`optimizer.state.encoder.weight.exp_avg`),
and `dcp.save` writes them. When the loss spikes it rolls back to the last checkpoint,
but its restore code builds the state dict to load into from `optimizer.state_dict()`,
whose per-parameter state is keyed by position (`optimizer.state.0.step`).

`python repro.py`: `dcp.load` plans one read per key of the state dict it is given, finds
no `optimizer.state.0.step` among the checkpoint's keys and raises `RuntimeError: Missing
key in checkpoint state_dict: optimizer.state.0.step.`
`python repro.py --fixed`: the restore builds the state dict with the same API that saved
it (`get_state_dict`), loads, and hands it back with `set_state_dict`. The check: the
restored weights and every optimizer moment equal copies taken when the checkpoint was
saved, and the next step from the restored state equals the step the saved run took.

Single process on the CPU; DCP needs no process group for that. The checkpoint goes to a
temporary folder.
"""

import atexit
import copy
import shutil
import sys
import tempfile

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

FIXED = "--fixed" in sys.argv[1:]


class Net(torch.nn.Module):
    """A small classifier with named submodules."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.encoder(x)))


def restore(model: torch.nn.Module, optimizer: torch.optim.Optimizer, checkpoint_id: str) -> None:
    """The loop's restore: load into the module's and optimizer's own state dicts."""
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    dcp.load(state, checkpoint_id=checkpoint_id)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])


if FIXED:
    # --- fix: start
    # Load into the same kind of state dict the checkpoint was saved from: get_state_dict
    # keys the optimizer state by parameter name, as it did when saving.
    def restore(
        model: torch.nn.Module, optimizer: torch.optim.Optimizer, checkpoint_id: str
    ) -> None:
        model_sd, optim_sd = get_state_dict(model, optimizer)
        state = {"model": model_sd, "optimizer": optim_sd}
        dcp.load(state, checkpoint_id=checkpoint_id)
        set_state_dict(
            model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"]
        )

    # --- fix: end


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(6)]


def step(x: torch.Tensor, y: torch.Tensor) -> float:
    """One training step."""
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


for x, y in batches[:3]:
    step(x, y)
checkpoint = tempfile.mkdtemp(prefix="repro-dcp-")
atexit.register(shutil.rmtree, checkpoint, ignore_errors=True)
model_sd, optim_sd = get_state_dict(model, optimizer)
dcp.save({"model": model_sd, "optimizer": optim_sd}, checkpoint_id=checkpoint)
saved_model = copy.deepcopy(model.state_dict())
saved_optim = copy.deepcopy(get_state_dict(model, optimizer)[1])
step(*batches[3])
expected_next = copy.deepcopy(model.state_dict())  # the step the saved run took next
print(
    "checkpoint saved after 3 steps; keys:",
    sorted(dcp.FileSystemReader(checkpoint).read_metadata().state_dict_metadata)[:3],
    "...",
)

for x, y in batches[4:]:
    step(x, y)
print("loss spiked after 6 steps: rolling back to the checkpoint")
restore(model, optimizer, checkpoint)
restored_model = copy.deepcopy(model.state_dict())
restored_optim = copy.deepcopy(get_state_dict(model, optimizer)[1])
step(*batches[3])
print("restored and stepped again")

# --- check: start
for name, value in saved_model.items():
    torch.testing.assert_close(restored_model[name], value, rtol=0, atol=0, msg=name)
assert restored_optim["state"].keys() == saved_optim["state"].keys()
moments = 0
for param, values in saved_optim["state"].items():
    for key, value in values.items():
        torch.testing.assert_close(
            restored_optim["state"][param][key], value, rtol=0, atol=0, msg=f"{param}.{key}"
        )
        moments += 1
for name, value in expected_next.items():
    torch.testing.assert_close(model.state_dict()[name], value, msg=name)
print(
    f"check: {len(saved_model)} weights and {moments} optimizer values restored as saved; the next step matches the saved run"
)
# --- check: end
