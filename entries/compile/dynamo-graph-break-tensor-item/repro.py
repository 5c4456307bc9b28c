"""Reproducer for dynamo-graph-break-tensor-item.

`python repro.py`: a training step for a small token-level regression model compiles its
loss with `torch.compile` (backend `aot_eager`: forward and backward traced as inductor
traces them, without generating C++). The loss is averaged over the real (unpadded)
tokens, counted with `mask.sum().item()`. Dynamo does not put `Tensor.item()` into a graph
(`capture_scalar_outputs` is off by default), so it logs `Graph break from
`Tensor.item()`, consider setting: ...`, compiles the code before the `.item()` as one
graph and the code after it (`torch_dynamo_resume_in_masked_mse_at_<line>`) as another,
and copies the count to Python between them on every step. The count is a constant of
the second graph, so the next batch's count recompiles it: three graphs where one was
expected. Graph-break and recompile logging is on, so the reason and the guard that
failed are printed too. The run finishes; the check region then fails on the graph count.
`python repro.py --fixed`: the count stays a tensor (`mask.sum()`), so the division
happens inside the graph; each step's loss is only turned into a Python number outside
the compiled function, when the losses are printed. Dynamo compiles the whole loss as
one graph and logs no graph break. The check counts the graphs the backend received
(one) and compares every step's loss and the trained weights, bit for bit, with the same
training run in eager mode, which keeps the original `.item()`.
"""

import copy
import sys

import torch

FIXED = "--fixed" in sys.argv[1:]

# AOTAutograd traces each graph's forward and backward as inductor does, without
# generating C++ code; the graph break is Dynamo's and the same with every backend.
aot_eager = torch._dynamo.lookup_backend("aot_eager")
graphs = []  # every FX graph Dynamo hands to the backend


def counting_aot_eager(gm, example_inputs):
    """The aot_eager backend, counting the graphs it compiles."""
    graphs.append(gm)
    return aot_eager(gm, example_inputs)


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
reference_model = copy.deepcopy(model)  # trained eagerly, for the check


def masked_mse(model, x, y, mask):
    """Mean squared error over the real tokens of padded sequences."""
    err = (model(x).squeeze(-1) - y) ** 2
    n_tokens = mask.sum().item()  # a Python float: Dynamo breaks the graph here
    return (err * mask).sum() / n_tokens


eager_loss = masked_mse  # the reference keeps the original code

if FIXED:
    # --- fix: start
    def masked_mse(model, x, y, mask):
        """Mean squared error over the real tokens; the count stays a tensor."""
        err = (model(x).squeeze(-1) - y) ** 2
        n_tokens = mask.sum()  # a 0-d tensor: stays in the graph, no host sync
        return (err * mask).sum() / n_tokens
    # --- fix: end

# What `TORCH_LOGS="graph_breaks,recompiles"` turns on: every graph break with its reason,
# and every recompilation with the guard that failed.
torch._logging.set_logs(graph_breaks=True, recompiles=True)
compiled_loss = torch.compile(masked_mse, backend=counting_aot_eager)


def train(model, loss_fn, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for x, y, mask in batches:
        optimizer.zero_grad()
        loss = loss_fn(model, x, y, mask)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())  # kept as tensors; turned into numbers once, below
    return torch.stack(losses)


batches = []
for _ in range(6):
    x = torch.randn(4, 16, 8)
    lengths = torch.randint(4, 17, (4,))
    mask = (torch.arange(16) < lengths[:, None]).float()  # 1 = real token, 0 = padding
    batches.append((x, torch.randn(4, 16), mask))

losses = train(model, compiled_loss, batches)
print("losses:", [round(v, 4) for v in losses.tolist()])
print(f"graphs compiled for the loss: {len(graphs)}")

# --- check: start
assert len(graphs) == 1, f"the compiled loss was split into {len(graphs)} graphs"
reference_losses = train(reference_model, eager_loss, batches)
# aot_eager runs the traced graphs with eager's own ATen kernels (no generated code),
# so the compiled run must equal eager training bit for bit.
assert torch.equal(losses, reference_losses), (losses, reference_losses)
for p, q in zip(model.parameters(), reference_model.parameters()):
    assert torch.equal(p, q), (p - q).abs().max()
print("check: one graph; every step's loss and the trained weights equal eager training exactly")
# --- check: end
