"""Reproducer for torch-load-cuda-on-cpu.

`python repro.py`: a "GPU trainer" process saves `model.state_dict()` whose storages are
tagged `cuda:0`, exactly as `torch.save` tags tensors that live on the first GPU. A
"CPU server" process (no GPU visible: `CUDA_VISIBLE_DEVICES=""`) then calls
`torch.load("model.pt")`. Each storage is restored to the location written in the file,
`cuda:0`, and `torch.serialization._validate_device` raises
`Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False`.
`python repro.py --fixed`: the server loads with `map_location="cpu"`, which restores every
storage on the CPU whatever the file says, and runs the model.

How the trainer writes `cuda:0` without a GPU: `torch.save` asks the taggers registered
with `torch.serialization.register_package` for each storage's location. The trainer
registers, ahead of the built-in ones, a tagger that answers `cuda:0`, so the file's
bytes are those a GPU run writes (the location string inside `data.pkl`); the tensor data
itself does not record a device. On a GPU machine, `model.cuda()` before saving has the
same effect.
"""

import os
import shutil
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

if sys.argv[1:2] == ["--trainer"]:
    import torch
    from torch import nn

    # Stand-in for "the model was on cuda:0 when saved": tag every storage as cuda:0.
    torch.serialization.register_package(
        0, lambda storage: "cuda:0" if storage.device.type == "cpu" else None, lambda storage, location: None
    )
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    torch.save(model.state_dict(), sys.argv[2])
    print("trainer: saved model.pt with storages tagged cuda:0")
    sys.exit(0)

if sys.argv[1:2] == ["--server"]:
    import torch
    from torch import nn

    print(f"server: torch.cuda.is_available() = {torch.cuda.is_available()}")
    path = sys.argv[2]
    if FIXED:
# --- fix: start
        state = torch.load(path, map_location="cpu")  # restore every storage on the CPU
        assert all(tensor.device.type == "cpu" for tensor in state.values())
# --- fix: end
    else:
        state = torch.load(path)  # restores each storage where the file says: cuda:0
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    model.load_state_dict(state)
    print("server: prediction", model(torch.ones(1, 8)).tolist())
    sys.exit(0)

workdir = tempfile.mkdtemp(prefix="repro-cuda-on-cpu-")
try:
    ckpt = os.path.join(workdir, "model.pt")
    flags = ["--fixed"] if FIXED else []
    subprocess.run([sys.executable, __file__, "--trainer", ckpt], check=True)
    cpu_only = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the server has no GPU
    server = subprocess.run([sys.executable, __file__, "--server", ckpt] + flags, env=cpu_only)
    sys.exit(server.returncode)
finally:
    shutil.rmtree(workdir, ignore_errors=True)
