"""Reproducer for hf-example-requires-source-install.

The job trains a small causal LM from scratch with a copy of transformers' example script
`examples/pytorch/language-modeling/run_clm.py` (condensed here: the same arguments, the
same data pipeline through `datasets`, a Llama built from `--model_type llama
--config_overrides`, the `Trainer`), on a text file and a word-level tokenizer written by
this script. The example's first lines call `check_min_version`, as every transformers
example does; the release process writes the next development version there on the main
branch (`5.24.0.dev0` while 5.23.0 is the newest release) and the release itself (`5.23.0`)
in the copy at the release's tag.

`python repro.py`: the copy from the main branch, run against the installed transformers
5.23.0, stops at its first line with `ImportError: This example requires a source install
from HuggingFace Transformers (see ...), but the version found is 5.23.0.`
`python repro.py --fixed`: the copy from the tag of the installed release (`git checkout
v5.23.0` in a clone), whose check asks for `5.23.0`; the same command then trains 4 steps
and saves its state and weights. The check trains the same model (same seed, same
configuration) on the same blocks of tokens, cut by hand from the text, with a plain
PyTorch SGD loop, and compares the loss of every step and every final weight.

Nothing is downloaded (the tokenizer, data and model are built in the script, and the Hub
is switched off) and it runs on the CPU.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub
os.environ["HF_DATASETS_OFFLINE"] = "1"

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, set_seed  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
SEED, STEPS, LR, BLOCK = 42, 4, 0.5, 8

# examples/pytorch/language-modeling/run_clm.py, condensed to what training from a text file uses.
RUN_CLM = '''#!/usr/bin/env python
"""Fine-tuning the library models for causal language modeling (GPT, GPT-2, CTRL, ...) on a text file."""

import logging
import sys
from dataclasses import dataclass, field
from itertools import chain
from typing import Optional

import datasets
from datasets import load_dataset

import transformers
from transformers import (
    CONFIG_MAPPING,
    AutoModelForCausalLM,
    AutoTokenizer,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
    default_data_collator,
    set_seed,
)
from transformers.utils import check_min_version
from transformers.utils.versions import require_version


# Will error if the minimal version of Transformers is not installed. Remove at your own risks.
check_min_version("@MIN_VERSION@")

require_version("datasets>=2.14.0", "To fix: pip install -r examples/pytorch/language-modeling/requirements.txt")

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_type: Optional[str] = field(default=None, metadata={"help": "If training from scratch, a model type."})
    config_overrides: Optional[str] = field(default=None, metadata={"help": "Override default config settings."})
    tokenizer_name: Optional[str] = field(default=None, metadata={"help": "Pretrained tokenizer name or path."})


@dataclass
class DataTrainingArguments:
    train_file: Optional[str] = field(default=None, metadata={"help": "The input training data file (a text file)."})
    block_size: Optional[int] = field(default=None, metadata={"help": "Sequence length after tokenization."})


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)

    # Set seed before initializing model.
    set_seed(training_args.seed)

    raw_datasets = load_dataset("text", data_files={"train": data_args.train_file}, keep_linebreaks=True)

    config = CONFIG_MAPPING[model_args.model_type]()
    logger.warning("You are instantiating a new config instance from scratch.")
    if model_args.config_overrides is not None:
        logger.info(f"Overriding config: {model_args.config_overrides}")
        config.update_from_string(model_args.config_overrides)
    tokenizer = AutoTokenizer.from_pretrained(model_args.tokenizer_name)

    model = AutoModelForCausalLM.from_config(config)
    n_params = sum({p.data_ptr(): p.numel() for p in model.parameters()}.values())
    logger.info(f"Training new model from scratch - Total size={n_params / 2**20:.2f}M params")

    embedding_size = model.get_input_embeddings().weight.shape[0]
    if len(tokenizer) > embedding_size:
        model.resize_token_embeddings(len(tokenizer))

    column_names = list(raw_datasets["train"].features)
    text_column_name = "text" if "text" in column_names else column_names[0]

    def tokenize_function(examples):
        return tokenizer(examples[text_column_name])

    with training_args.main_process_first(desc="dataset map tokenization"):
        tokenized_datasets = raw_datasets.map(tokenize_function, batched=True, remove_columns=column_names)

    block_size = data_args.block_size

    # Main data processing function that will concatenate all texts from our dataset and generate chunks of block_size.
    def group_texts(examples):
        # Concatenate all texts.
        concatenated_examples = {k: list(chain(*examples[k])) for k in examples}
        total_length = len(concatenated_examples[list(examples.keys())[0]])
        # We drop the small remainder, and if the total_length < block_size  we exclude this batch and return an empty dict.
        total_length = (total_length // block_size) * block_size
        # Split by chunks of max_len.
        result = {
            k: [t[i : i + block_size] for i in range(0, total_length, block_size)]
            for k, t in concatenated_examples.items()
        }
        result["labels"] = result["input_ids"].copy()
        return result

    with training_args.main_process_first(desc="grouping texts together"):
        lm_datasets = tokenized_datasets.map(group_texts, batched=True)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=lm_datasets["train"],
        processing_class=tokenizer,
        data_collator=default_data_collator,
    )

    train_result = trainer.train()
    trainer.save_model()  # Saves the tokenizer too for easy upload
    metrics = train_result.metrics
    metrics["train_samples"] = len(lm_datasets["train"])
    trainer.log_metrics("train", metrics)
    trainer.save_metrics("train", metrics)
    trainer.save_state()


if __name__ == "__main__":
    main()
'''


def example_at(ref: str) -> str:
    """run_clm.py as the transformers repository holds it at `ref` (`main` or a release tag).

    utils/release.py writes `check_min_version("X.Y.0")` into every example when X.Y.0 is
    released (patch releases leave it), and `X.(Y+1).0.dev0` right after, on main.
    """
    if ref == "main":
        major, minor = transformers.__version__.split(".")[:2]
        min_version = f"{major}.{int(minor) + 1}.0.dev0"
    else:
        major, minor = ref.lstrip("v").split(".")[:2]
        min_version = f"{major}.{minor}.0"
    return RUN_CLM.replace("@MIN_VERSION@", min_version)


work = tempfile.mkdtemp(prefix="repro-run-clm-")
lines = [
    "the cat sat on the mat and the dog sat on the rug",
    "a bird sang in the tree while the cat slept in the sun",
    "the dog ran to the park and the bird flew over the tree",
    "in the morning the sun rose over the park and the mat",
    "the rug was warm and the cat and the dog slept on it",
]
train_file = os.path.join(work, "train.txt")
with open(train_file, "w") as handle:
    handle.write("\n".join(lines) + "\n")

# A word-level tokenizer of exactly these words, saved as a tokenizer folder.
words = sorted({word for line in lines for word in line.split()})
vocab = {word: index for index, word in enumerate(["<unk>", *words])}
backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer_dir = os.path.join(work, "tokenizer")
PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>").save_pretrained(tokenizer_dir)

# head_dim is given: --config_overrides updates a default config, whose head_dim (128) was
# derived from the default sizes before the override.
overrides = {
    "vocab_size": len(vocab),
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": BLOCK,
    "bos_token_id": 0,
    "eos_token_id": 0,
}
output_dir = os.path.join(work, "test-clm")
arguments = {
    "model_type": "llama",
    "config_overrides": ",".join(f"{key}={value}" for key, value in overrides.items()),
    "tokenizer_name": tokenizer_dir,
    "train_file": train_file,
    "block_size": BLOCK,
    "output_dir": output_dir,
    "seed": SEED,
    "max_steps": STEPS,
    "per_device_train_batch_size": 64,  # every block in one batch
    "optim": "sgd",
    "learning_rate": LR,
    "lr_scheduler_type": "constant",
    "weight_decay": 0,
    "max_grad_norm": 0,  # no clipping
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
    "disable_tqdm": "true",
}
command = ["--do_train", "--use_cpu"]
command += [item for key, value in arguments.items() for item in (f"--{key}", str(value))]

ref = "main"  # the example as copied from GitHub's main branch
if FIXED:
    # --- fix: start
    # Run the example from the tag of the installed release, not from main:
    #   python -c "import transformers; print(transformers.__version__)"   # 5.23.0
    #   git -C transformers checkout v5.23.0
    ref = f"v{transformers.__version__}"
    # --- fix: end

script = os.path.join(work, "run_clm.py")
with open(script, "w") as handle:
    handle.write(example_at(ref))
print(f"$ python run_clm.py ... (run_clm.py as the repository holds it at {ref})", flush=True)
job = subprocess.run([sys.executable, script, *command], timeout=300)
print(f"run_clm.py exited with {job.returncode}", flush=True)

# The reference: the same configuration and seed, the same text cut into blocks by hand,
# trained by a plain PyTorch loop, full-batch SGD at the same rate.
ids = [vocab[word] for line in lines for word in line.split()]
n_blocks = len(ids) // BLOCK
blocks = torch.tensor(ids[: n_blocks * BLOCK]).reshape(n_blocks, BLOCK)
set_seed(SEED)
reference = LlamaForCausalLM(LlamaConfig(**overrides))
reference.train()
optimizer = torch.optim.SGD(reference.parameters(), lr=LR)
reference_losses = []
for _ in range(STEPS):
    loss = reference(input_ids=blocks, labels=blocks).loss
    reference_losses.append(loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# --- check: start
assert job.returncode == 0, f"run_clm.py failed with exit code {job.returncode}"
with open(os.path.join(output_dir, "trainer_state.json")) as handle:
    state = json.load(handle)
losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
assert state["global_step"] == STEPS and len(losses) == STEPS, (state["global_step"], losses)
torch.testing.assert_close(
    torch.tensor(losses), torch.tensor(reference_losses), rtol=1e-4, atol=1e-5
)
trained = load_file(os.path.join(output_dir, "model.safetensors"))
weights = reference.state_dict()
assert set(trained) == set(weights), sorted(set(trained) ^ set(weights))
for name, value in trained.items():
    torch.testing.assert_close(value, weights[name], rtol=1e-4, atol=1e-5)
with open(os.path.join(output_dir, "train_results.json")) as handle:
    assert json.load(handle)["train_samples"] == n_blocks
print(
    f"check: {STEPS} steps on {n_blocks} blocks of {BLOCK} tokens; losses "
    f"{[round(value, 4) for value in losses]} and all {len(trained)} saved tensors equal a plain PyTorch loop's"
)
# --- check: end
shutil.rmtree(work, ignore_errors=True)
