"""Reproducer for hf-tokenizer-requires-sentencepiece.

`python repro.py`: a tokenizer folder holds only a SentencePiece model (`tokenizer.model`,
as Llama, T5 and Mistral checkpoints long shipped) and `tokenizer_config.json`. The job
runs in the environment `pip install transformers` gives: transformers and the
distributions its metadata requires, linked into a temporary folder. Neither
sentencepiece nor protobuf is among them (transformers lists them only as the
`sentencepiece` extra). `AutoTokenizer.from_pretrained` cannot read the model file:
transformers 5.23 logs `SentencePieceExtractor requires the SentencePiece library but it
was not found in your environment`, falls back to reading the file as a tiktoken
vocabulary and fails.
`python repro.py --fixed`: `python -m pip install sentencepiece protobuf` installs both
into that environment and the same job tokenizes. The check compares the token ids the
job saved with the ids sentencepiece itself gives for the same model and texts.

Nothing is downloaded: the environment is made of links to the packages already
installed for this interpreter, pip installs from local wheels of the installed
sentencepiece and protobuf (rebuilt from their files), and everything is removed
afterwards.
"""

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import sentencepiece as spm

FIXED = "--fixed" in sys.argv[1:]

TEXTS = [f"the quick brown fox {i} jumps over the lazy dog number {i % 7}" for i in range(300)]

JOB = """
import json
import sys

from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
texts = json.load(open(sys.argv[2]))
ids = tokenizer(texts, add_special_tokens=False).input_ids
print(type(tokenizer).__name__, "ids of the first text:", ids[0])
json.dump(ids, open(sys.argv[3], "w"))  # the job's output file
"""


def closure(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions `pip install <requirements>` would put in the environment."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        if "extra ==" in requirement:
            continue  # optional extras such as `transformers[sentencepiece]`
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


def build_environment(folder: str, requirements: list[str]) -> list[str]:
    """Link the top-level files of each distribution into `folder`; return their names."""
    names = []
    for distribution in closure(requirements):
        root = distribution.locate_file("")
        tops = {path.parts[0] for path in distribution.files or [] if path.parts[0] != ".."}
        for top in sorted(tops):
            source = os.path.join(root, top)
            target = os.path.join(folder, top)
            if os.path.exists(source) and not os.path.lexists(target):
                os.symlink(source, target)
        names.append(distribution.metadata["Name"])
    return names


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


work = tempfile.mkdtemp(prefix="repro-spm-")
model_dir = os.path.join(work, "tokenizer")  # a checkpoint's tokenizer files
os.makedirs(model_dir)
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(TEXTS), model_prefix=os.path.join(model_dir, "tokenizer"), vocab_size=60,
    model_type="bpe", unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2,
)
os.remove(os.path.join(model_dir, "tokenizer.vocab"))
with open(os.path.join(model_dir, "tokenizer_config.json"), "w") as f:
    json.dump({"tokenizer_class": "LlamaTokenizer"}, f)
texts_file = os.path.join(work, "texts.json")
with open(texts_file, "w") as f:
    json.dump(TEXTS, f)

site = os.path.join(work, "env")  # the job's fresh environment
wheels = os.path.join(work, "wheels")  # stands in for the package index
os.makedirs(site)
os.makedirs(wheels)
installed = build_environment(site, ["transformers"])  # what `pip install transformers` puts there
print(f"job environment: {', '.join(sorted(installed, key=str.lower))}", flush=True)
for name in ("sentencepiece", "protobuf"):
    build_wheel(wheels, name)
# pip: install into the job's environment, from the local wheels only, no configuration
os.environ.update(PIP_TARGET=site, PIP_NO_INDEX="1", PIP_FIND_LINKS=wheels, PIP_CONFIG_FILE=os.devnull,
                  PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore")

if FIXED:
    # --- fix: start
    # transformers lists these only as its `sentencepiece` extra: install them into the
    # environment that runs the job.  $ python -m pip install sentencepiece protobuf
    subprocess.run([sys.executable, "-m", "pip", "install", "sentencepiece", "protobuf"], check=True)
    # --- fix: end

ids_file = os.path.join(work, "ids.json")
# -S: no site-packages of this interpreter; the job sees its environment and the
# standard library only, like a fresh virtual environment.
job_env = dict(os.environ, PYTHONPATH=site, PYTHONNOUSERSITE="1", HF_HUB_OFFLINE="1")
job = subprocess.run([sys.executable, "-S", "-c", JOB, model_dir, texts_file, ids_file], env=job_env, timeout=150)
saved = None
if job.returncode == 0:
    with open(ids_file) as handle:
        saved = json.load(handle)
reference = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "tokenizer.model"))
shutil.rmtree(work, ignore_errors=True)

# --- check: start
assert saved is not None, f"the job failed with exit code {job.returncode}"
expected = reference.encode(TEXTS)  # sentencepiece's own ids for the same model and texts
assert len(saved) == len(TEXTS), len(saved)
assert saved == expected, "the job's token ids differ from sentencepiece's"
assert reference.decode(saved) == TEXTS
print(f"check: the job's ids for all {len(TEXTS)} texts equal sentencepiece's, and decode to the texts")
# --- check: end
