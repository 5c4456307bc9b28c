"""Scrub credentials from a reproducer's captured output before anything keeps or shows it.

A reproducer runs without the runner's secrets, but it may still print one (a token in a
file it read, a URL with a password in it); its output is stored in records, published on
the entry's page and printed by ``failpedia verify``. Every line read from the output
passes through ``redact_secrets`` first, so what is matched, excerpted and stored is the
scrubbed text.

The rules recognise credentials by their published formats (GitHub, Hugging Face, AWS,
Slack, OpenAI-style ``sk-`` keys, JSON Web Tokens), by what an HTTP header or a URL says
they are, and by a long hex or base64 value (with a digit in it) after a name ending in
``token``, ``key`` or ``secret``, or any value after ``password``. They leave ordinary ML
output alone: ``KeyError: 'layer.0.weight'``, ``hf_hub_download``, ``sha256=...`` and
every signature of the catalog read the same after scrubbing (a test holds them to it).
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

_KEEP_NAME = r"\g<name>" + REDACTED

# (pattern, replacement); applied in order to each piece of text.
_RULES: list[tuple[re.Pattern[str], str]] = [
    # An HTTP Authorization header keeps its scheme: "Authorization: Bearer [REDACTED]".
    (
        re.compile(
            r"(?P<name>\bauthorization\s*[:=]\s*(?:bearer|basic|token|bot|digest)\s+)[^\s'\"]+",
            re.IGNORECASE,
        ),
        _KEEP_NAME,
    ),
    (re.compile(r"(?P<name>\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*", re.IGNORECASE), _KEEP_NAME),
    # user:password@ in a URL: "https://[REDACTED]@host/".
    (re.compile(r"(?<=://)[^\s/:@]+:[^\s/@]+@"), REDACTED + "@"),
    # Formats with a fixed prefix.
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), REDACTED),
    # A long value after a credential's name: token=..., api_key: "...", secret = ...
    (
        re.compile(
            r"(?P<name>\b[\w-]*(?:token|key|secret)s?[\"']?\s*[:=]\s*[\"']?)"
            r"(?=[A-Za-z0-9+/_-]*[0-9])[A-Za-z0-9+/_-]{16,}={0,2}",
            re.IGNORECASE,
        ),
        _KEEP_NAME,
    ),
    (
        re.compile(
            r"(?P<name>\b[\w-]*(?:password|passwd)[\"']?\s*[:=]\s*[\"']?)[^\s'\"]+",
            re.IGNORECASE,
        ),
        _KEEP_NAME,
    ),
]


def redact_secrets(text: str) -> str:
    """``text`` with every credential-looking value replaced by ``REDACTED``."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
