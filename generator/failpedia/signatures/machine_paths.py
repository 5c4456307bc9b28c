"""Paths of the machine that printed a text, rewritten to the neutral form pages publish.

A captured traceback names the capturing machine's checkout, temporary folders, home and
interpreter prefix. Those say nothing about the failure, leak who captured it, and make
two captures of the same message differ. Signature texts must already be in this form
(the validator compares a text with its normalised self), and the runner normalises what
it stores in records, so pages and texts read the same way:

- ``/usr/lib/python3.11/site-packages/torch/nn/x.py`` -> ``.../site-packages/torch/nn/x.py``
- ``/root/.pyenv/versions/3.11.7/lib/python3.11/os.py`` -> ``.../lib/python3.11/os.py``
- ``/work/main/entries/data/x/repro.py`` -> ``repro.py`` (and ``predict.py`` beside it)
- ``/tmp/repro-abc123/sample_021.npy`` -> ``.../sample_021.npy``
- ``/home/alice/.cache/huggingface`` -> ``~/.cache/huggingface``
"""

from __future__ import annotations

import re

_PATH_CHAR = r"[^\s\"'`,;:()\[\]{}<>|=]"
_SEGMENT = r"[^\s\"'`,;:()\[\]{}<>|=/\\]"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # An interpreter's packages folder, wherever the interpreter lives.
    (
        re.compile(
            rf"(?<!{_PATH_CHAR})(?:[A-Za-z]:)?{_PATH_CHAR}*[/\\](site|dist)-packages(?=[/\\])"
        ),
        r".../\1-packages",
    ),
    # The standard library of an installed interpreter.
    (
        re.compile(rf"(?<!{_PATH_CHAR}){_PATH_CHAR}*/lib/(python\d+(?:\.\d+)?t?)(?=/)"),
        r".../lib/\1",
    ),
    # The reproducer itself, wherever the checkout or the sandbox put it, and the files
    # beside it in its entry folder.
    (re.compile(rf"(?<!{_PATH_CHAR}){_PATH_CHAR}*/(repro\.py)\b"), r"\1"),
    (
        re.compile(
            rf"(?<!{_PATH_CHAR}){_PATH_CHAR}*/entries/{_SEGMENT}+/{_SEGMENT}+/(?={_SEGMENT})"
        ),
        "",
    ),
    # Temporary folders: keep the last part, the one the message is about.
    (re.compile(rf"/(?:private/)?(?:tmp|var/tmp|var/folders)/(?:{_SEGMENT}+/)*"), ".../"),
    # Home folders.
    (re.compile(rf"/(?:home|Users)/{_SEGMENT}+(?=/)"), "~"),
    # root's home, also right after a compiler's -I or -L
    (re.compile(r"(?:(?<![\w.~])|(?<=-[IL]))/root(?=/)"), "~"),
    (re.compile(r"[A-Za-z]:\\Users\\[^\\\s\"']+(?=\\)"), "~"),
)


def normalise_paths(text: str) -> str:
    """``text`` with machine paths in their neutral form."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


_TEMPLATE = re.compile(
    r"\{[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:![rsa])?(?::[^{}]*)?\}"  # {name}, {x.y!r:>4}
    r"|%[-+ #0]*\d*(?:\.\d+)?[sdifr]\b"  # %s, %5.2f (``{}`` is also a printed empty dict)
)


def template_placeholders(text: str) -> list[str]:
    """Source-template placeholders (``{name}``, ``%s``) found in ``text``: a
    signature text is a message as printed, with real values."""
    return _TEMPLATE.findall(text)
