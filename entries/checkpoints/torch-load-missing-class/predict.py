"""The serving script: a process of its own, whose `__main__` is this file, not the trainer.

`python predict.py MODEL [--fixed]` loads the model with the project's `load_model` (from
repro.py) and writes its predictions for a fixed batch next to the model file.
"""

import os
import sys

import torch
from repro import load_model

model_path = sys.argv[1]
model = load_model(model_path)
model.eval()
with torch.no_grad():
    predictions = model(torch.ones(4, 8))
torch.save(predictions, os.path.join(os.path.dirname(model_path), "predictions.pt"))
print("predict.py:", predictions[0].tolist())
