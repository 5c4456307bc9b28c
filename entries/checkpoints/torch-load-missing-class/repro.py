"""Reproducer for torch-load-missing-class.

`python repro.py`: a train/serve split in two processes. This script trains: it defines
`class Net` in itself and saves the whole model with `torch.save(model, path)`, which
pickles a reference `__main__.Net`, not the class. `predict.py`, a separate script, loads
it with `torch.load(path, weights_only=False)` (what the `Weights only load failed`
message of torch >= 2.6 suggests). In that process `__main__` is `predict.py`, which has
no `Net`: `AttributeError: Can't get attribute 'Net' on <module '__main__' from
'.../predict.py'>`.
`python repro.py --fixed`: the class lives in an importable module, `model_def.py`; the
trainer saves only `model.state_dict()`, and the loader builds `Net()` from that module and
loads the weights with the default `weights_only=True`. The check compares the serving
process's predictions with the trained model's on the same inputs.
"""

import os
import subprocess
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]


class Net(nn.Module):  # defined in the training script itself: pickled as `__main__.Net`
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def save_model(model: nn.Module, path: str) -> None:
    torch.save(model, path)  # pickles the object; its class is stored as a reference


def load_model(path: str) -> nn.Module:
    return torch.load(path, weights_only=False)  # needs that class in *this* process


if FIXED:
    # --- fix: start
    from model_def import Net  # the class in a module both scripts import

    def save_model(model: nn.Module, path: str) -> None:
        torch.save(model.state_dict(), path)  # tensors only: no class reference inside

    def load_model(path: str) -> nn.Module:
        model = Net()  # the code builds the architecture ...
        model.load_state_dict(torch.load(path, weights_only=True))  # ... the file holds the weights
        return model
    # --- fix: end


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = Net()
    inputs = torch.ones(4, 8)
    with tempfile.TemporaryDirectory(prefix="repro-missing-class-") as project:
        model_path = os.path.join(project, "model.pt")
        save_model(model, model_path)
        print("train: saved model.pt")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        serve = subprocess.run([sys.executable, os.path.join(here, "predict.py"), model_path, *sys.argv[1:]], env=env)
        served = torch.load(os.path.join(project, "predictions.pt")) if serve.returncode == 0 else None

    # --- check: start
    assert served is not None, f"predict.py failed with exit code {serve.returncode}"
    with torch.no_grad():
        torch.testing.assert_close(served, model(inputs))
    print("check: the serving script's predictions equal the trained model's")
    # --- check: end
