"""Reproducer for hf-trainer-requires-accelerate.

The job fine-tunes a causal LM (here a tiny Llama written with `save_pretrained`) with the
`Trainer`. It runs in a fresh virtual environment that has what `pip install transformers
torch` puts there (links to the installed packages): transformers does not depend on
accelerate, so there is none.

`python repro.py`: `TrainingArguments` sets up its device through accelerate's
`PartialState` and raises `ImportError: Using the `Trainer` with `PyTorch` requires
`accelerate>=1.1.0`: Please run `pip install transformers[torch]` or `pip install
'accelerate>=1.1.0'`` before any step is taken.
`python repro.py --fixed`: `python -m pip install accelerate==1.15.0` with the job's
interpreter (a release at or above the minimum the message names), then the same job
trains 4 steps and writes its losses and weights. The check trains the same model on the
same data with a plain PyTorch loop (same initial weights, full-batch SGD) and compares
the loss of every step and the final weights.

Nothing is downloaded: pip installs from local wheels of the installed accelerate and
psutil (rebuilt from their files), and every folder is removed afterwards.
"""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import torch
from transformers import LlamaConfig, LlamaForCausalLM

FIXED = "--fixed" in sys.argv[1:]
STEPS, LR = 4, 0.5

JOB = """
import sys

import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

checkpoint, output, steps, lr = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
rows = [{"input_ids": ids, "labels": ids} for ids in (torch.arange(64).reshape(8, 8) * 7 % 61)]
args = TrainingArguments(
    output_dir=output + ".run", use_cpu=True, max_steps=steps, per_device_train_batch_size=len(rows),
    optim="sgd", learning_rate=lr, lr_scheduler_type="constant", weight_decay=0.0, max_grad_norm=0.0,
    logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=True,
)
model = AutoModelForCausalLM.from_pretrained(checkpoint)
trainer = Trainer(model=model, args=args, train_dataset=rows)
trainer.train()
losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
print("losses:", losses)
torch.save({"losses": losses, "weights": trainer.model.state_dict()}, output)
"""


def closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions `pip install <requirements>` would put in the environment."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        if "extra ==" in requirement:
            continue  # optional extras such as `transformers[torch]`
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a requirement for another platform or Python version
        seen[key] = distribution
        todo.extend(distribution.requires or [])
    return list(seen.values())


def build_venv(folder: str, requirements: list[str]) -> tuple[str, list[str]]:
    """A virtual environment whose site-packages links the closure of `requirements`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True)
    python = os.path.join(folder, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    names = []
    for distribution in closure(requirements):
        root = distribution.locate_file("")
        tops = {path.parts[0] for path in distribution.files or [] if path.parts[0] != ".."}
        for top in sorted(tops):
            source = os.path.join(root, top)
            target = os.path.join(site, top)
            if os.path.exists(source) and not os.path.lexists(target):
                os.symlink(source, target)
        names.append(distribution.metadata["Name"])
    return python, names


def build_wheel(folder: str, name: str) -> None:
    """Pack the installed distribution `name` back into a wheel in `folder` (offline)."""
    distribution = importlib.metadata.distribution(name)
    dist_info = f"{distribution.metadata['Name']}-{distribution.version}.dist-info"
    tag = re.search(r"^Tag: (\S+)", distribution.read_text("WHEEL"), re.MULTILINE).group(1)
    root = distribution.locate_file("")
    files = [
        path for path in distribution.files or []
        if path.parts[0] != ".." and "__pycache__" not in path.parts
        and path.name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
    ]
    wheel = os.path.join(folder, f"{distribution.metadata['Name']}-{distribution.version}-{tag}.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        for path in files:
            archive.write(os.path.join(root, path), str(path))
        archive.writestr(f"{dist_info}/RECORD", "".join(f"{path},,\n" for path in files))


work = tempfile.mkdtemp(prefix="repro-accelerate-")
checkpoint = os.path.join(work, "tiny-llama")
torch.manual_seed(0)
config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16)
LlamaForCausalLM(config).save_pretrained(checkpoint)

# the job's environment: `python -m venv` + `pip install transformers torch` (and pip)
python, installed = build_venv(os.path.join(work, "venv"), ["transformers", "torch", "pip"])
print(f"job environment: {', '.join(sorted(installed, key=str.lower))}", flush=True)
wheels = os.path.join(work, "wheels")  # stands in for the package index
os.mkdir(wheels)
for distribution in closure(["accelerate"]):  # accelerate and what it needs beyond the job's packages
    if distribution.metadata["Name"] not in installed:
        build_wheel(wheels, distribution.metadata["Name"])
os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=wheels, PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1",
                  PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore", PYTHONNOUSERSITE="1")

if FIXED:
    # --- fix: start
    # transformers does not depend on accelerate, but its Trainer needs it: install it into
    # the environment that runs the job, with that environment's interpreter.
    #   $ python -m pip install accelerate==1.15.0
    subprocess.run([python, "-m", "pip", "install", "accelerate==1.15.0"], check=True)
    # --- fix: end

shutil.rmtree(wheels)  # room for the job
output = os.path.join(work, "job-output.pt")
job = subprocess.run([python, "-c", JOB, checkpoint, output, str(STEPS), str(LR)], timeout=300)
result = torch.load(output) if job.returncode == 0 else None

# The reference: the same checkpoint trained by hand, full-batch SGD at the same rate.
reference = LlamaForCausalLM.from_pretrained(checkpoint)
reference.train()
batch = torch.arange(64).reshape(8, 8) * 7 % 61
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
reference_losses = []
for _ in range(STEPS):
    loss = reference(input_ids=batch, labels=batch).loss
    reference_losses.append(loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
shutil.rmtree(work, ignore_errors=True)

# --- check: start
assert result is not None, f"the job failed with exit code {job.returncode}"
assert len(result["losses"]) == STEPS, result["losses"]
torch.testing.assert_close(torch.tensor(result["losses"]), torch.tensor(reference_losses), rtol=1e-3, atol=1e-4)
weights = reference.state_dict()
assert result["weights"].keys() == weights.keys()
for name, value in weights.items():
    torch.testing.assert_close(result["weights"][name], value, rtol=1e-3, atol=1e-5)
print(f"check: {STEPS} losses {[round(v, 4) for v in result['losses']]} and all {len(weights)} tensors"
      " equal a plain PyTorch loop's")
# --- check: end
