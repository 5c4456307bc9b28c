"""Reproducer for hf-tokenizer-class-does-not-exist.

Early LLaMA conversions (made with a development branch before Transformers 4.28 released
the class as `LlamaTokenizer`) wrote `"tokenizer_class": "LLaMATokenizer"` into
`tokenizer_config.json`, and copies of those folders are still loaded. A tiny Llama
tokenizer is built and saved in the script, and its config gets that name. transformers 4.51.3 (with huggingface_hub 0.36.0 and
tokenizers 0.21.4, the releases it accepts) is installed apart from the catalog's pins
and put first on `sys.path`: Transformers 5 no longer prints this message.

`python repro.py`: `AutoTokenizer.from_pretrained` finds no class `LLaMATokenizerFast`
or `LLaMATokenizer` and raises `ValueError: Tokenizer class LLaMATokenizer does not
exist or is not currently imported.`
`python repro.py --fixed`: `tokenizer_class` in the folder's `tokenizer_config.json` is
set to the class's real name, `LlamaTokenizer`.
The check: the loaded tokenizer is a `LlamaTokenizerFast` whose ids, attention mask and
special tokens equal those of the tokenizer that was saved.
"""

import atexit
import json
import os
import shutil
import sys
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"  # everything is local: no download is ever tried
PRIVATE = os.path.join(sys.prefix, "failpedia-private")
for release in ("transformers-4.51.3", "huggingface-hub-0.36.0", "tokenizers-0.21.4"):
    sys.path.insert(0, os.path.join(PRIVATE, release))

import transformers  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import AutoTokenizer, LlamaTokenizerFast  # noqa: E402

FIXED = "--fixed" in sys.argv[1:]
TEXTS = ["the llama reads the weights", "a tokenizer with unknown words: zebra"]

print("transformers", transformers.__version__, "from", os.path.dirname(transformers.__file__))
work = tempfile.mkdtemp(prefix="repro-tokclass-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
os.chdir(work)
words = ["the", "llama", "reads", "weights", "a", "tokenizer", "with", "unknown", "words", ":"]
vocab = {token: i for i, token in enumerate(["<unk>", "<s>", "</s>", *words])}
backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
backend.pre_tokenizer = pre_tokenizers.Sequence(
    [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
)
tokenizer = LlamaTokenizerFast(
    tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
)
tokenizer.save_pretrained("llama-7b-hf")
config_path = os.path.join("llama-7b-hf", "tokenizer_config.json")
with open(config_path) as handle:
    config = json.load(handle)
config["tokenizer_class"] = "LLaMATokenizer"  # as the early conversion script wrote it
with open(config_path, "w") as handle:
    json.dump(config, handle, indent=2)

if FIXED:
    # --- fix: start
    # Name the class as Transformers spells it (LlamaTokenizer since 4.28).
    with open(config_path) as handle:
        config = json.load(handle)
    config["tokenizer_class"] = "LlamaTokenizer"
    with open(config_path, "w") as handle:
        json.dump(config, handle, indent=2)
    # --- fix: end

loaded = AutoTokenizer.from_pretrained("llama-7b-hf")
batch = loaded(TEXTS, padding=False)
print(f"loaded {type(loaded).__name__}")

# --- check: start
assert isinstance(loaded, LlamaTokenizerFast), type(loaded)
reference = tokenizer(TEXTS, padding=False)
assert batch["input_ids"] == reference["input_ids"], (batch["input_ids"], reference["input_ids"])
assert batch["attention_mask"] == reference["attention_mask"]
assert loaded.all_special_tokens == tokenizer.all_special_tokens
assert all(ids[0] == vocab["<s>"] for ids in batch["input_ids"]), "no BOS token added"
assert vocab["<unk>"] in batch["input_ids"][1], "no out-of-vocabulary word tested"
print(f"check: ids of {len(TEXTS)} texts equal those of the tokenizer that was saved")
# --- check: end
