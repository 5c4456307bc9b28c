"""Reproducer for matmul-dtype-mismatch.

`python repro.py`: a batch of features comes from NumPy, whose default float dtype is
float64, and `torch.from_numpy` keeps that dtype. The model's parameters are float32
(PyTorch's default). The same float64 batch meets float32 weights in the three matrix
products a model typically uses, and each refuses it with its own wording:
`nn.Linear` (addmm) says `mat1 and mat2 must have the same dtype, but got Double and Float`,
`x @ weight` (mm) says `expected m1 and m2 to have the same dtype, but got: double != float`,
and `torch.bmm` says `expected scalar type Float but found Double`.
`python repro.py --fixed`: the batch is built in the dtype of the model's parameters, so
all three products run.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv[1:]
torch.manual_seed(0)
rng = np.random.default_rng(0)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(20, 16)  # F.linear with a bias: addmm
        self.proj = nn.Parameter(torch.randn(20, 16))  # x @ proj: mm
        self.keys = nn.Parameter(torch.randn(4, 20, 6))  # batched product: bmm


model = Block()  # float32 parameters
features = rng.normal(size=(4, 6, 20))  # float64: NumPy's default

batch = torch.from_numpy(features)  # keeps NumPy's float64
if FIXED:
# --- fix: start
    # Build the input tensor in the dtype of the model's parameters (float32 here).
    batch = torch.as_tensor(features, dtype=next(model.parameters()).dtype)
# --- fix: end
print(f"input dtype: {batch.dtype}, parameter dtype: {model.linear.weight.dtype}")

products = {
    "nn.Linear(x)": lambda x, m: m.linear(x),
    "x @ weight": lambda x, m: x @ m.proj,
    "torch.bmm(x, keys)": lambda x, m: torch.bmm(x, m.keys),
}
outputs = {}
for name, product in products.items():
    print(f"--- {name}")
    try:
        outputs[name] = product(batch, model)
        print(f"ok, output {tuple(outputs[name].shape)} {outputs[name].dtype}")
    except RuntimeError as error:
        print(f"RuntimeError: {error}")

# --- check: start
# Reference: the same products in float64 throughout (NumPy's data, the parameters widened).
reference_model = Block().double()
reference_model.load_state_dict(model.state_dict())
reference_input = torch.from_numpy(features)
assert list(outputs) == list(products), f"only {list(outputs)} ran"
for name, product in products.items():
    expected = product(reference_input, reference_model)
    torch.testing.assert_close(outputs[name].double(), expected, rtol=1e-5, atol=1e-5)
print("check: all three products ran and match the float64 computation")
# --- check: end
