"""Reproducer for hf-cant-load-tokenizer.

A fine-tuning script saves its model with `model.save_pretrained(...)` and not the
tokenizer; the evaluation script then loads both from that folder, as people do with a
`checkpoint-*` folder or an exported model. transformers 4.51.3 (with huggingface_hub
0.36.0 and tokenizers 0.21.4, the releases it accepts) is installed apart from the
catalog's pins and put first on `sys.path`: from 4.52 on, Transformers no longer raises
for a folder without tokenizer files (see the entry).

`python repro.py`: `AutoTokenizer.from_pretrained("run/final")` finds `config.json` (a BERT
model) but no `vocab.txt`, `tokenizer.json` or `tokenizer_config.json`, and raises
`OSError: Can't load tokenizer for 'run/final'. If you were trying to load it from
'https://huggingface.co/models', ...`.
`python repro.py --fixed`: the tokenizer is saved into the same folder as the model.
The check: the tokenizer loaded from the folder gives the same ids, attention masks and
special tokens as the tokenizer used in training, on texts with words outside the
vocabulary, and the model loaded beside it gives the same outputs.
"""

import atexit
import os
import shutil
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"  # everything is local: no download is ever tried
PRIVATE = os.path.join(sys.prefix, "failpedia-private")
for release in ("transformers-4.51.3", "huggingface-hub-0.36.0", "tokenizers-0.21.4"):
    sys.path.insert(0, os.path.join(PRIVATE, release))

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel, BertTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
WORDS = [
    "the",
    "a",
    "model",
    "train",
    "data",
    "loss",
    "learn",
    "rate",
    "step",
    "token",
    "layer",
    "head",
]
TEXTS = ["the model learns the rate", "a token layer, unknown words: zebra!", "loss step head"]

print("transformers", transformers.__version__, "from", os.path.dirname(transformers.__file__))
work = tempfile.mkdtemp(prefix="repro-tokenizer-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.chdir(work)
with open("vocab.txt", "w") as handle:
    handle.write(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, ",", ":", "!"]) + "\n"
    )
tokenizer = BertTokenizerFast("vocab.txt")
torch.manual_seed(0)
config = BertConfig(
    vocab_size=tokenizer.vocab_size,
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
)
model = BertModel(config).eval()

# The training script's save.
model.save_pretrained("run/final")
if FIXED:
    # --- fix: start
    # Save the tokenizer with the model, into the same folder.
    tokenizer.save_pretrained("run/final")
    # --- fix: end

# The evaluation script.
loaded_tokenizer = AutoTokenizer.from_pretrained("run/final")
loaded_model = AutoModel.from_pretrained("run/final").eval()
batch = loaded_tokenizer(TEXTS, padding=True, return_tensors="pt")
print(f"loaded {type(loaded_tokenizer).__name__} and {type(loaded_model).__name__} from run/final")

# --- check: start
reference = tokenizer(TEXTS, padding=True, return_tensors="pt")
assert torch.equal(batch["input_ids"], reference["input_ids"]), (
    batch["input_ids"],
    reference["input_ids"],
)
assert torch.equal(batch["attention_mask"], reference["attention_mask"])
assert loaded_tokenizer.all_special_tokens == tokenizer.all_special_tokens
assert tokenizer.unk_token_id in reference["input_ids"][1].tolist(), (
    "no out-of-vocabulary word tested"
)
with torch.no_grad():
    torch.testing.assert_close(
        loaded_model(**batch).last_hidden_state, model(**reference).last_hidden_state
    )
print(
    f"check: ids of {len(TEXTS)} texts and the model's outputs equal those of the training tokenizer"
)
# --- check: end
