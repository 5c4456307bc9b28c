"""Reproducer for hf-argparser-unused-arguments.

A fine-tuning script in the style of the transformers examples reads its settings with
`HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))`. Its launch line was
written for transformers 4.40 and asks for an evaluation every 50 steps with
`--evaluation_strategy steps --eval_steps 50`.

`python repro.py`: on the pinned transformers 5.23.0 `TrainingArguments` has no field
`evaluation_strategy` (renamed `eval_strategy` in 4.41, the old name removed in 4.51), so
argparse leaves the flag and its value unparsed and `parse_args_into_dataclasses` refuses
them: `ValueError: Some specified arguments are not used by the HfArgumentParser:
['--evaluation_strategy', 'steps']`.
`python repro.py --fixed`: the launch line uses the current flag name, `--eval_strategy`.
The check: the parsed dataclasses equal the ones the script means, built directly from
keywords (no command line), field by field, so no flag was dropped or misread.

Nothing is downloaded; nothing is trained; the run uses the CPU.
"""

import atexit
import dataclasses
import shutil
import sys
import tempfile

from transformers import HfArgumentParser, TrainingArguments

FIXED = "--fixed" in sys.argv[1:]


@dataclasses.dataclass
class ModelArguments:
    model_name_or_path: str = dataclasses.field(metadata={"help": "model folder or name"})


@dataclasses.dataclass
class DataArguments:
    train_file: str = dataclasses.field(metadata={"help": "training data (JSON lines)"})
    max_seq_length: int = 128


output_dir = tempfile.mkdtemp(prefix="repro-hf-argparser-")
atexit.register(shutil.rmtree, output_dir, ignore_errors=True)
# The launch line as written for transformers 4.40.
command_line = [
    "--model_name_or_path", "tiny-model",
    "--train_file", "train.jsonl",
    "--max_seq_length", "64",
    "--output_dir", output_dir,
    "--per_device_train_batch_size", "8",
    "--learning_rate", "3e-5",
    "--evaluation_strategy", "steps",
    "--eval_steps", "50",
    "--report_to", "none",
]  # fmt: skip
if FIXED:
    # --- fix: start
    # transformers 4.41 renamed the flag; 4.51 removed the old name.
    command_line[command_line.index("--evaluation_strategy")] = "--eval_strategy"
    # --- fix: end

parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
model_args, data_args, training_args = parser.parse_args_into_dataclasses(args=command_line)
print("parsed:", model_args, data_args, f"eval_strategy={training_args.eval_strategy}")

# --- check: start
# Reference: the settings the script means, built from keywords with no parser involved.
intended_model = ModelArguments(model_name_or_path="tiny-model")
intended_data = DataArguments(train_file="train.jsonl", max_seq_length=64)
intended_training = TrainingArguments(
    output_dir=output_dir,
    per_device_train_batch_size=8,
    learning_rate=3e-5,
    eval_strategy="steps",
    eval_steps=50,
    report_to="none",
)
assert model_args == intended_model, model_args
assert data_args == intended_data, data_args
parsed, intended = training_args.to_dict(), intended_training.to_dict()
differences = {key: (parsed[key], intended[key]) for key in intended if parsed[key] != intended[key]}
assert not differences, differences
assert training_args.eval_strategy == "steps" and training_args.eval_steps == 50
print(f"check: all {len(intended)} training arguments equal the intended ones (eval every 50 steps)")
# --- check: end
