"""Reproducer for trl-sfttrainer-argument-moved-to-sftconfig.

`python repro.py`: a fine-tuning script written for trl 0.8 passes the dataset's text
column and the sequence length to the trainer, `SFTTrainer(..., dataset_text_field=
"content", max_seq_length=8)`. trl 0.9 moved these settings to `SFTConfig` (a
`FutureWarning` until 0.12) and 0.13.0 removed them from `SFTTrainer.__init__`, so on
trl 1.16.0 Python raises `TypeError: SFTTrainer.__init__() got an unexpected keyword
argument 'dataset_text_field'`.
`python repro.py --fixed`: the same settings in `SFTConfig` (`max_seq_length` is called
`max_length` there since trl 0.20). The check confirms that the trainer tokenized the
`content` column, cut to 8 tokens, as the tokenizer does on its own, and that two
training steps run with a finite loss.

Everything is built in the script (a word-level tokenizer, a 2-layer GPT-2 from a config,
six sentences); nothing is downloaded, and the run uses the CPU.
"""

import math
import os
import sys
import tempfile

_hf_home = tempfile.TemporaryDirectory(prefix="repro-hf-home-")
os.environ["HF_HOME"] = _hf_home.name  # nothing is written to the user's cache
os.environ["HF_HUB_OFFLINE"] = "1"  # and nothing is fetched from the Hub

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]

WORDS = ["<eos>", "<pad>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "and", "slept"]
TEXT_COLUMN, MAX_TOKENS = "content", 8

backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<eos>"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>", pad_token="<pad>", unk_token="<eos>")

texts = [
    "the cat sat on the mat",
    "a dog ran to the park and the cat slept on the mat",
    "the dog sat",
    "a cat ran to the dog and the dog ran to the park",
    "the mat",
    "a dog slept on a mat and a cat slept on the dog",
]
# The text is in a column called "content"; "label" is another column the trainer must not read.
dataset = Dataset.from_dict({TEXT_COLUMN: texts, "label": list(range(len(texts)))})

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=2, n_head=2))

with tempfile.TemporaryDirectory(prefix="repro-sft-") as output_dir:
    config = {"output_dir": output_dir, "max_steps": 2, "per_device_train_batch_size": 2,
              "learning_rate": 1e-3, "use_cpu": True, "report_to": "none", "save_strategy": "no",
              "disable_tqdm": True}
    # The settings as a trl 0.8 script passes them: to the trainer.
    trainer_settings = {"dataset_text_field": TEXT_COLUMN, "max_seq_length": MAX_TOKENS}
    if FIXED:
        # --- fix: start
        # Move the settings into SFTConfig (trl 0.20 and later call max_seq_length max_length).
        config.update(dataset_text_field=TEXT_COLUMN, max_length=MAX_TOKENS)
        trainer_settings = {}
        # --- fix: end

    trainer = SFTTrainer(
        model=model,
        args=SFTConfig(**config),
        train_dataset=dataset,
        processing_class=tokenizer,
        **trainer_settings,
    )
    result = trainer.train()
    print("steps:", trainer.state.global_step, "training loss:", result.training_loss)

    # --- check: start
    # The trainer tokenized the "content" column, each row cut to MAX_TOKENS tokens, exactly
    # as the tokenizer does it on its own (trl appends the end-of-text token before cutting).
    reference = [(tokenizer(text)["input_ids"] + [tokenizer.eos_token_id])[:MAX_TOKENS] for text in texts]
    assert trainer.train_dataset["input_ids"] == reference, trainer.train_dataset["input_ids"]
    assert max(len(ids) for ids in reference) == MAX_TOKENS < max(len(t.split()) for t in texts)
    # Two optimizer steps ran, with a finite loss.
    assert trainer.state.global_step == 2, trainer.state.global_step
    assert math.isfinite(result.training_loss), result.training_loss
    print(f"check: all {len(texts)} rows tokenized from {TEXT_COLUMN!r}, cut to {MAX_TOKENS} tokens; 2 steps ran")
    # --- check: end
