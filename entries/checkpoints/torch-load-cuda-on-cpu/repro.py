"""Reproducer for torch-load-cuda-on-cpu.

`python repro.py`: a "GPU trainer" process saves `model.state_dict()` whose storages are
tagged `cuda:0`, exactly as `torch.save` tags tensors that live on the first GPU. The
"CPU server" (the script itself, with no GPU visible: `CUDA_VISIBLE_DEVICES=""`) then
calls `torch.load("model.pt")`. Each storage is restored to the location written in the file,
`cuda:0`, and `torch.serialization._validate_device` raises
`Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False`.
`python repro.py --fixed`: the server loads with `map_location="cpu"`, which restores every
storage on the CPU whatever the file says, and runs the model. The check compares the
loaded weights with the trainer's network, rebuilt from the same seed.

How the trainer writes `cuda:0` without a GPU: `torch.save` asks the taggers registered
with `torch.serialization.register_package` for each storage's location. The trainer
registers, ahead of the built-in ones, a tagger that answers `cuda:0`, so the file's
bytes are those a GPU run writes (the location string inside `data.pkl`); the tensor data
itself does not record a device. On a GPU machine, `model.cuda()` before saving has the
same effect.
"""

import os
import subprocess
import sys
import tempfile

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # this process is the server: no GPU visible
import torch  # noqa: E402  (after hiding the GPUs)
from torch import nn  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]


def build_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))


if sys.argv[1:2] == ["--trainer"]:
    # Stand-in for "the model was on cuda:0 when saved": tag every storage as cuda:0.
    torch.serialization.register_package(
        0, lambda storage: "cuda:0" if storage.device.type == "cpu" else None, lambda storage, location: None
    )
    torch.save(build_model().state_dict(), sys.argv[2])
    print("trainer: saved model.pt with storages tagged cuda:0")
    sys.exit(0)


def load_weights(path: str) -> dict:
    return torch.load(path)  # restores each storage where the file says: cuda:0


if FIXED:
    # --- fix: start
    def load_weights(path: str) -> dict:
        return torch.load(path, map_location="cpu")  # restore every storage on the CPU
    # --- fix: end


with tempfile.TemporaryDirectory(prefix="repro-cuda-on-cpu-") as workdir:
    checkpoint = os.path.join(workdir, "model.pt")
    subprocess.run([sys.executable, __file__, "--trainer", checkpoint], check=True)
    print(f"server: torch.cuda.is_available() = {torch.cuda.is_available()}")
    state = load_weights(checkpoint)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
model.load_state_dict(state)
print("server: prediction", model(torch.ones(1, 8)).tolist())

# --- check: start
trained = build_model()  # the trainer's network, rebuilt from the same seed
assert all(tensor.device.type == "cpu" for tensor in state.values())
torch.testing.assert_close(model.state_dict(), trained.state_dict())
print("check: the server's model holds the trainer's weights, on the CPU")
# --- check: end
