"""Reproducer for torch-load-missing-class.

`python repro.py`: two scripts in a temporary project folder, run as separate processes
like a real train/serve split. `train.py` defines `class Net` in the script itself and
saves the whole model with `torch.save(model, "model.pt")`, which pickles a reference
`__main__.Net`, not the class. `predict.py` loads it with
`torch.load("model.pt", weights_only=False)` (what the `Weights only load failed` message
of torch >= 2.6 suggests). In that process `__main__` is `predict.py`, which has no `Net`:
`AttributeError: Can't get attribute 'Net' on <module '__main__' from '.../predict.py'>`.
`python repro.py --fixed`: the class lives in an importable module, `model_def.py`;
`train.py` saves only `model.state_dict()`, and `predict.py` builds `Net()` from that
module and loads the weights with the default `weights_only=True`.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

FIXED = "--fixed" in sys.argv[1:]

NET_CLASS = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
'''

BROKEN_TRAIN = NET_CLASS + '''
torch.manual_seed(0)
model = Net()
torch.save(model, "model.pt")  # pickles the object; the class is stored as "__main__.Net"
print("train.py: saved the whole model to model.pt")
'''

BROKEN_PREDICT = '''
import torch

model = torch.load("model.pt", weights_only=False)  # needs __main__.Net in *this* process
model.eval()
print("predict.py:", model(torch.ones(1, 8)))
'''

# --- fix: start
MODEL_DEF = NET_CLASS  # model_def.py: the class in a module both scripts import

FIXED_TRAIN = '''
import torch
from model_def import Net

torch.manual_seed(0)
model = Net()
torch.save(model.state_dict(), "model.pt")  # tensors only: no class reference inside
print("train.py: saved model.state_dict() to model.pt")
'''

FIXED_PREDICT = '''
import torch
from model_def import Net

model = Net()  # the code defines the architecture ...
model.load_state_dict(torch.load("model.pt", weights_only=True))  # ... the file the weights
model.eval()
print("predict.py:", model(torch.ones(1, 8)))
'''
# --- fix: end

project = tempfile.mkdtemp(prefix="repro-missing-class-")
try:
    files = {"train.py": BROKEN_TRAIN, "predict.py": BROKEN_PREDICT}
    if FIXED:
        files = {"model_def.py": MODEL_DEF, "train.py": FIXED_TRAIN, "predict.py": FIXED_PREDICT}
    for name, source in files.items():
        with open(os.path.join(project, name), "w") as f:
            f.write(textwrap.dedent(source))

    for script in ("train.py", "predict.py"):
        result = subprocess.run([sys.executable, script], cwd=project)
        if result.returncode != 0:
            sys.exit(f"{script} failed with exit code {result.returncode}")
finally:
    shutil.rmtree(project, ignore_errors=True)
