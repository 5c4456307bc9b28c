"""What is taken out of log text before it is shared: home folders, and anything that
looks like a secret.

``failpedia report`` applies these rules to everything it prints, and the site's log page
to what it puts in a new-issue link: ``signatures.json`` publishes them
(``rules.redactions``), so both remove the same things. Each rule is ``(name, pattern,
flags, replacement)``: a match is replaced by the pattern's first group, where it has one
that took part (``token=`` of ``token=abc`` stays), followed by ``replacement``. The
patterns use syntax that Python and JavaScript read alike (``flags`` is ``""`` or ``"i"``).

A home folder becomes ``~``, so a path keeps what helps (``~/venv/lib/.../torch/...``)
and loses who ran it. Where ``failpedia report`` runs, the actual ``$HOME`` and the login
name, as a path component, are removed too (``Redactor``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

REDACTED = "<redacted>"
HOME = "~"
USER = "<user>"

# Keys whose values are secrets (``password=...``); the special tokens of tokenizers
# (``pad_token = tokenizer.eos_token``, in Hugging Face's own messages) are not.
_SECRET_KEY = (
    r"(?!(?:pad|eos|bos|unk|sep|cls|mask)_token\b)[A-Za-z0-9_]*"
    r"(?:token|password|passwd|secret|api_?key|apikey|access_?key|private_?key|credentials?)\b"
)
_PATH_PART = r"[^/\\\s\"'<>:;,|()\[\]]+"

REDACTIONS: list[tuple[str, str, str, str]] = [
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        "",
        REDACTED,
    ),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{20,}", "", REDACTED),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", "", REDACTED),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "", REDACTED),
    ("api-key", r"\bsk-[A-Za-z0-9_-]{16,}", "", REDACTED),
    ("bearer", r"\b(Bearer\s+)[A-Za-z0-9._~+/=-]+", "i", REDACTED),
    ("url-credentials", r"([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", "", REDACTED + "@"),
    ("secret-assignment", r"\b(" + _SECRET_KEY + r"\s*=\s*[\"']?)[^\s\"'&;,)]+", "i", REDACTED),
    ("secret-field", r"([\"']" + _SECRET_KEY + r"[\"']\s*:\s*[\"'])[^\"']+", "i", REDACTED),
    ("home-unix", r"(?:/home|/Users)/" + _PATH_PART, "", HOME),
    ("home-windows", r"\b[A-Za-z]:[\\/]Users[\\/]" + _PATH_PART, "i", HOME),
    ("home-of-user", r"~[A-Za-z_][A-Za-z0-9._-]*(?=/)", "", HOME),
]


def published_redactions() -> list[list[str]]:
    """The rules as ``signatures.json`` carries them for the log page."""
    return [list(rule) for rule in REDACTIONS]


def _compile(pattern: str, flags: str) -> re.Pattern[str]:
    return re.compile(pattern, re.ASCII | (re.IGNORECASE if "i" in flags else 0))


def _replacer(replacement: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        kept = match.group(1) if match.re.groups else None
        return (kept or "") + replacement

    return replace


class Redactor:
    """Applies every rule, then removes this machine's home folder and login name."""

    def __init__(self, home: str | None = None, user: str | None = None) -> None:
        self._rules = [
            (_compile(pattern, flags), _replacer(replacement))
            for _, pattern, flags, replacement in REDACTIONS
        ]
        home = (home or "").rstrip("/\\")
        if len(home) > 1:  # "/" or nothing is no one's
            self._rules.insert(
                0,
                (re.compile(re.escape(home) + r"(?=[/\\\s\"'<>:;,|()\[\]]|$)"), _replacer(HOME)),
            )
        if user and len(user) > 2 and user != "root":
            escaped = re.escape(user)
            self._rules.append((re.compile(rf"(?<=[/\\]){escaped}(?=[/\\])"), _replacer(USER)))

    def __call__(self, text: str) -> str:
        for regex, replace in self._rules:
            text = regex.sub(replace, text)
        return text
