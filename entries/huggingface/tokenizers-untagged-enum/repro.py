"""Reproducer for tokenizers-untagged-enum.

A model repository's `tokenizer.json` was written by a current tokenizers (0.20 or
later saves a BPE model's merges as pairs, `[["t", "h"], ...]`), and is read where an
older tokenizers is installed, as in an environment pinned for an older transformers.
Here the file is written by tokenizers 0.22.1, in a separate process as on the machine
that published the model, and read with tokenizers 0.19.1; both are installed apart
(`failpedia requirements --private` names their folders) and put on `sys.path` here.

`python repro.py`: `Tokenizer.from_file` raises `Exception: data did not match any
variant of untagged enum ModelWrapper at line N column 3`: no model type's layout
matches the `model` section, whose merges 0.19.1 expects as strings.
`python repro.py --fixed`: a tokenizers release that reads the file is used (0.22.1 in
place of 0.19.1 on the path, as `pip install -U tokenizers` would do).
The check: the encodings of the loaded tokenizer (ids, tokens, offsets) equal those the
writer's tokenizer gave when it saved the file, on texts with words it never saw.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

FIXED = "--fixed" in sys.argv[1:]
OLD = os.path.join(sys.prefix, "failpedia-private", "tokenizers-0.19.1")
NEW = os.path.join(sys.prefix, "failpedia-private", "tokenizers-0.22.1")
TEXTS = ["the model learns the rate", "a tokenizer trained elsewhere", "loss step head"]
WRITER = """
import json, sys
import tokenizers
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
corpus = ["the model learns the rate of the loss", "a token layer head step"] * 20
tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"]))
tokenizer.save(sys.argv[1] + "/tokenizer.json")
encodings = tokenizer.encode_batch(json.loads(sys.argv[2]))
reference = [{"ids": e.ids, "tokens": e.tokens, "offsets": e.offsets} for e in encodings]
with open(sys.argv[1] + "/reference.json", "w") as handle:
    json.dump({"version": tokenizers.__version__, "vocab": tokenizer.get_vocab(), "encodings": reference}, handle)
"""

work = tempfile.mkdtemp(prefix="repro-untagged-")
try:
    writer_env = {**os.environ, "PYTHONPATH": NEW}  # the publisher's newer tokenizers
    subprocess.run(
        [sys.executable, "-c", WRITER, work, json.dumps(TEXTS)], check=True, env=writer_env
    )
    with open(os.path.join(work, "reference.json")) as handle:
        reference = json.load(handle)
    print("tokenizer.json written by tokenizers", reference["version"])

    sys.path.insert(0, OLD)  # the environment's older tokenizers
    if FIXED:
        # --- fix: start
        # Use a tokenizers release that reads the file (0.20 or later): in a real
        # environment `python -m pip install -U "tokenizers>=0.20"` (and a transformers
        # that accepts it); here 0.22.1 takes the old release's place on the path.
        sys.path.remove(OLD)
        sys.path.insert(0, NEW)
        # --- fix: end

    import tokenizers
    from tokenizers import Tokenizer

    print("reading it with tokenizers", tokenizers.__version__)
    tokenizer = Tokenizer.from_file(os.path.join(work, "tokenizer.json"))
    encodings = tokenizer.encode_batch(TEXTS)

    # --- check: start
    got = [
        {"ids": e.ids, "tokens": e.tokens, "offsets": [list(o) for o in e.offsets]}
        for e in encodings
    ]
    assert got == reference["encodings"], (got, reference["encodings"])
    assert all(e["ids"] for e in got), "a text was encoded to nothing"
    assert tokenizer.get_vocab() == reference["vocab"]
    print(f"check: the encodings of {len(TEXTS)} texts equal the writer's")
    # --- check: end
finally:
    shutil.rmtree(work, ignore_errors=True)
