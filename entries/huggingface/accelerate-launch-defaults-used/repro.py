"""Reproducer for accelerate-launch-defaults-used.

The project keeps its launch settings in `accelerate_config.yaml` beside the training
script (bf16 mixed precision, one process on the CPU), as repositories that ship an
`accelerate` config do. `python repro.py` launches the script with `accelerate launch
train.py` and no `--config_file`. This machine has no default config (`accelerate config`
was never run here), so `accelerate launch` warns "The following values were not passed
to `accelerate launch` and had defaults used instead:" and runs with
`--mixed_precision 'no'`: the model runs in float32, not the bf16 the project asked for.
`python repro.py --fixed` passes the project's config with `--config_file`; the run
reports bf16, and the check compares its output with the same layer run under
`torch.autocast("cpu", dtype=torch.bfloat16)` here, without accelerate.
"""

import os
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]

CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: 'NO'
mixed_precision: bf16
num_machines: 1
num_processes: 1
use_cpu: true
dynamo_config: {}
"""

TRAIN = """\
import sys
import torch
from accelerate import Accelerator

accelerator = Accelerator()
torch.manual_seed(0)
layer = torch.nn.Linear(16, 8)
inputs = torch.randn(4, 16)
torch.save({"state": layer.state_dict(), "inputs": inputs}, "setup.pt")
model = accelerator.prepare(layer)
out = model(inputs)
print(f"mixed precision: {accelerator.mixed_precision}", flush=True)
torch.save({"mixed_precision": accelerator.mixed_precision, "out": out.detach()}, "run.pt")
"""


def main() -> None:
    import torch

    folder = tempfile.mkdtemp(prefix="repro-accelerate-")
    with open(os.path.join(folder, "accelerate_config.yaml"), "w") as f:
        f.write(CONFIG)
    with open(os.path.join(folder, "train.py"), "w") as f:
        f.write(TRAIN)
    # no default config on this machine: HF_HOME points at an empty folder
    env = dict(os.environ, HF_HOME=os.path.join(folder, "hf-home"), OMP_NUM_THREADS="1")
    launch = [sys.executable, "-m", "accelerate.commands.launch"]
    if FIXED:
        # --- fix: start
        launch += ["--config_file", "accelerate_config.yaml"]  # the settings the project chose
        # --- fix: end
    done = subprocess.run([*launch, "train.py"], cwd=folder, env=env, timeout=120)
    print(f"accelerate launch exit code: {done.returncode}")

    # --- check: start
    assert done.returncode == 0, done.returncode
    run = torch.load(os.path.join(folder, "run.pt"))
    assert run["mixed_precision"] == "bf16", f"ran with mixed precision {run['mixed_precision']!r}"
    setup = torch.load(os.path.join(folder, "setup.pt"))
    layer = torch.nn.Linear(16, 8)
    layer.load_state_dict(setup["state"])
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = layer(setup["inputs"]).float()  # bf16 computed here, without accelerate
    torch.testing.assert_close(run["out"], expected)
    print("check: the run used bf16 and its output equals the layer run under bf16 autocast")
    # --- check: end


if __name__ == "__main__":
    main()
