"""Reproducer for hf-bitsandbytes-not-installed.

The job loads a causal LM (here a tiny Llama written with `save_pretrained`) in 8-bit:
`from_pretrained(path, quantization_config=BitsAndBytesConfig(load_in_8bit=True))`. It
runs in a fresh virtual environment that has what `pip install transformers accelerate`
puts there (links to the installed packages), and no bitsandbytes.

`python repro.py`: transformers' bitsandbytes quantizer checks its packages before it
reads any weight and raises `ImportError: Using `bitsandbytes` 8-bit quantization
requires bitsandbytes: `pip install -U bitsandbytes>=0.46.1``.
`python repro.py --fixed`: `python -m pip install bitsandbytes==0.50.2` with the job's
interpreter, then the same job loads the model in 8-bit (bitsandbytes runs its int8
matmul on the CPU too) and writes its logits. The check asserts that every linear layer
of the decoder became an int8 `Linear8bitLt` and that the logits equal those of the
full-precision model within int8 quantization error.

Nothing is downloaded: pip installs from a local wheel of the installed bitsandbytes
(rebuilt from its files), and every folder is removed afterwards.
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

JOB = """
import sys

import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

checkpoint, output = sys.argv[1], sys.argv[2]
model = AutoModelForCausalLM.from_pretrained(
    checkpoint, quantization_config=BitsAndBytesConfig(load_in_8bit=True), dtype=torch.float16
)
input_ids = torch.arange(32).reshape(2, 16) % 128
with torch.no_grad():
    logits = model(input_ids).logits.float()
layers = {name: (type(module).__name__, str(module.weight.dtype))
          for name, module in model.model.layers.named_modules() if hasattr(module, "weight") and module.weight.dim() == 2}
print("loaded in 8-bit:", model.is_loaded_in_8bit, "footprint", model.get_memory_footprint(), "bytes")
torch.save({"logits": logits, "layers": layers}, output)
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


work = tempfile.mkdtemp(prefix="repro-bnb-")
checkpoint = os.path.join(work, "tiny-llama")
torch.manual_seed(0)
config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=4)
reference_model = LlamaForCausalLM(config).eval()
reference_model.save_pretrained(checkpoint)

# the job's environment: `python -m venv` + `pip install transformers accelerate` (and pip)
python, installed = build_venv(os.path.join(work, "venv"), ["transformers", "accelerate", "pip"])
print(f"job environment: {', '.join(sorted(installed, key=str.lower))}", flush=True)
wheels = os.path.join(work, "wheels")  # stands in for the package index
os.mkdir(wheels)
build_wheel(wheels, "bitsandbytes")
os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=wheels, PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1",
                  PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore", PYTHONNOUSERSITE="1")

if FIXED:
    # --- fix: start
    # transformers does not depend on bitsandbytes: install it into the environment that
    # runs the job, with that environment's interpreter.
    #   $ python -m pip install bitsandbytes==0.50.2
    subprocess.run([python, "-m", "pip", "install", "bitsandbytes==0.50.2"], check=True)
    # --- fix: end

os.remove(os.path.join(wheels, os.listdir(wheels)[0]))  # room for the job
output = os.path.join(work, "job-output.pt")
job = subprocess.run([python, "-c", JOB, checkpoint, output], timeout=300)
result = torch.load(output) if job.returncode == 0 else None
with torch.no_grad():
    reference = reference_model(torch.arange(32).reshape(2, 16) % 128).logits
shutil.rmtree(work, ignore_errors=True)

# --- check: start
assert result is not None, f"the job failed with exit code {job.returncode}"
linear = {name: kind for name, kind in result["layers"].items() if "proj" in name}
assert len(linear) == 2 * 7, linear  # q, k, v, o, gate, up, down in both decoder layers
assert all(kind == ("Linear8bitLt", "torch.int8") for kind in linear.values()), linear
torch.testing.assert_close(result["logits"], reference, atol=0.05, rtol=0.05)
print("check: 14 int8 Linear8bitLt layers; logits equal the full-precision model's within int8 error")
# --- check: end
