"""Where a failure no entry knows would go: a category and an id for ``failpedia new``,
read off its most error-like line.

The id is the exception's name in words, then the first words of its message (numbers,
quoted values and small words left out): ``ValueError: bad schedule 'x'`` becomes
``value-error-bad-schedule``. The category is the one whose words the error's lines use
most (``CATEGORY_WORDS``, whole words; a trailing ``*`` marks a stem), among the
categories the catalog has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_MESSAGE_WORDS = 4
MAX_ID_LENGTH = 60
NO_CATEGORY = "CATEGORY"  # the placeholder when no category's words appear

# Words that place an error in a category, by category id (entries/categories.yaml).
CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "distributed": (
        "nccl",
        "gloo",
        "torch.distributed",
        "torchrun",
        "rendezvous",
        "processgroup",
        "ddp",
        "fsdp",
        "childfailederror",
        "collective",
        "all_reduce",
        "allreduce",
        "watchdog",
    ),
    "cuda": (
        "cuda",
        "cudnn",
        "cublas",
        "device-side assert",
        "out of memory",
        "illegal memory access",
        "kernel image",
        "nvidia",
        "gpu",
    ),
    "compile": ("dynamo", "inductor", "triton", "torch.compile", "graph break", "recompil*"),
    "autograd": ("backward", "autograd", "requires_grad", "grad_fn", "leaf variable", "gradient"),
    "data": ("dataloader", "worker", "collate", "pickle", "shared memory", "shm", "sampler"),
    "checkpoints": (
        "state_dict",
        "checkpoint",
        "torch.load",
        "weights_only",
        "safetensors",
        "unpickl*",
        "map_location",
    ),
    "numerics": ("nan", "inf", "infinity", "overflow", "gradscaler", "fp16", "bf16", "amp"),
    "huggingface": (
        "transformers",
        "tokenizer",
        "datasets",
        "accelerate",
        "huggingface",
        "trainer",
        "from_pretrained",
    ),
    "environment": (
        "modulenotfounderror",
        "importerror",
        "no module named",
        "undefined symbol",
        "glibc",
        "numpy",
        ".so",
        "version",
    ),
    "shapes": ("shape", "size mismatch", "dimension", "dtype", "same device", "mat1", "expected"),
}

_EXCEPTION = re.compile(
    r"\b(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt))\b"
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_SMALL_WORDS = frozenset(
    {"a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "and", "or", "is"}
    | {"are", "was", "were", "be", "been", "it", "its", "this", "that", "from", "as", "into"}
    | {"than", "then", "but"}
)


def suggest_id(text: str, taken: Iterable[str] = ()) -> str:
    """An entry id for the error in ``text``, different from every id in ``taken``."""
    words: list[str] = []
    message = text
    exception = _EXCEPTION.search(text)
    if exception:
        words = [part.lower() for part in _CAMEL.findall(exception.group(1))]
        message = text[exception.end() :]
    message_words = [
        word.lower()
        for word in _WORD.findall(_QUOTED.sub(" ", message))
        if word.lower() not in _SMALL_WORDS and not any(char.isdigit() for char in word)
    ]
    words += message_words[:MAX_MESSAGE_WORDS]
    suggestion = ""
    for word in words:
        longer = f"{suggestion}-{word}" if suggestion else word
        if len(longer) > MAX_ID_LENGTH:
            break
        suggestion = longer
    suggestion = suggestion or "unknown-failure"
    used = set(taken)
    candidate, number = suggestion, 2
    while candidate in used:
        candidate, number = f"{suggestion}-{number}", number + 1
    return candidate


def _word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    forms = [
        re.escape(word[:-1]) if word.endswith("*") else re.escape(word) + r"(?![a-z0-9_])"
        for word in words
    ]
    return re.compile(r"(?<![a-z0-9_])(?:" + "|".join(forms) + ")")


_CATEGORY_PATTERNS = {category: _word_pattern(words) for category, words in CATEGORY_WORDS.items()}


def suggest_category(texts: Iterable[str], categories: Iterable[str]) -> str:
    """The category among ``categories`` whose words ``texts`` use most; ties go to the
    one listed first in ``CATEGORY_WORDS``. ``NO_CATEGORY`` when none is used."""
    text = "\n".join(texts).lower()
    available = set(categories)
    best, best_count = NO_CATEGORY, 0
    for category, pattern in _CATEGORY_PATTERNS.items():
        if category not in available:
            continue
        count = len(pattern.findall(text))
        if count > best_count:
            best, best_count = category, count
    return best
