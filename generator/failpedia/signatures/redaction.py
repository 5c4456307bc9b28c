"""What is taken out of log text before anyone shares it: credentials, e-mail addresses and
home folders. The one redaction policy.

Every path that hands log text on applies these rules: ``failpedia report`` (``Redactor``),
the runner before it matches, stores or prints a reproducer's output (``redact``, through
``verify.capture``), and the site's log page before it puts lines in a new-issue link
(``signatures.json`` publishes the rules, ``published_redactions``, and the page's worker
applies them). No path carries rules of its own; ``tests/signatures/test_scrubbing.py``
runs every case through every path.

A rule is a ``Redaction``: ``keep`` matches what stays (``password=`` of
``password=hunter2``), ``secret`` what follows it and goes, replaced by ``replacement``;
a match that ``unless`` also matches (``pad_token = tokenizer.eos_token``, ``token=None``)
stays as it is. A secret that spans lines (a private key) leaves its line breaks behind,
so a text keeps its line count and numbered lines keep their numbers. Every pattern is in
the signature dialect (``dialect``): it reads alike in Python and JavaScript and cannot
backtrack catastrophically; both engines compile its canonical form. Patterns that start
with a repeat bound it (``{1,64}``), so no line, however long, makes them slow.

A home folder becomes ``~``, so a path keeps what helps (``~/venv/lib/.../torch/...``)
and loses who ran it. Where ``failpedia report`` runs, the actual ``$HOME`` and the login
name, as a path component, are removed too (``Redactor``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

from failpedia.signatures.dialect import compile_pattern

REDACTED = "<redacted>"
HOME = "~"
USER = "<user>"


class Redaction(NamedTuple):
    """One rule: what stays before the secret, the secret, what replaces it, and the
    matches that are no secret after all."""

    name: str
    keep: str
    secret: str
    replacement: str = REDACTED
    unless: str = ""


def _anycase(word: str) -> str:
    """``word`` in any case, spelled out (``[Tt][Oo]...``): both engines then read it
    alike, and the dialect's backtracking check sees every character it can match."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


def _names(words: list[str]) -> str:
    """A pattern for ``words`` in any case, as a tree: the alternatives at each point
    start with different letters, so a name is read once, never tried again and again.
    ``_`` in a word stands for an optional ``_`` or ``-`` (``api_key``, ``api-key``,
    ``apikey``)."""
    tree: dict[str, dict[str, Any]] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        parts = [
            ("[_-]?" if char == "_" else _anycase(char)) + render(child)
            for char, child in node.items()
            if char
        ]
        if not parts:
            return ""
        if len(parts) == 1 and "" not in node:
            return parts[0]
        return "(?:" + "|".join(parts) + ")" + ("?" if "" in node else "")

    return render(tree)


# Names whose value is a secret, also where they end a longer name (MY_SERVICE_TOKEN).
_KEY_KINDS = ("api", "access", "secret", "private", "account", "client", "auth")
_STRONG_WORDS = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "credential",
    "credentials",
    *(f"{kind}_key" for kind in (*_KEY_KINDS, "encryption", "signing", "master")),
    "access_key_id",
]
_STRONG_NAME = _names(_STRONG_WORDS)
_TOKEN_NAME = _anycase("token")
# The special tokens of tokenizers (pad_token = tokenizer.eos_token) are no secrets: a
# match takes their first word in, so that ``_NOT_A_SECRET`` sees it.
_SPECIAL = (
    "(?:" + "|".join(_anycase(w) for w in ("pad", "eos", "bos", "unk", "sep", "cls", "mask")) + ")"
)
_SPECIAL_TOKEN = _SPECIAL + "_" + _TOKEN_NAME
_TOKEN = f"(?:{_SPECIAL}_)?{_TOKEN_NAME}"
_ANY_NAME = f"(?:{_STRONG_NAME}|{_TOKEN})"
# A name ends where an assignment starts: "name = ", "name: ", '"name": '.
_ASSIGNED = "[\"']?[ \\t]*[:=][ \\t]*"
# A bare value ends at what ends a value in prose, URLs and code; its first character is
# none that starts a placeholder (<pad>, [MASK], {...}, $VAR, ***) or another flag.
_VALUE = "[^\\s\"'`&;,)}\\]]"
_FIRST = "[^\\s\"'`&;,)}\\]<\\[{($*%-]"
# A token's value is long and holds a digit: "EOT token = 128009" is an id, "every
# token: flatten ..." prose, "token=os.environ[...]" code.
_TOKEN_VALUE = "[A-Za-z0-9+\\/=._~%-]{12,}"
# Matches that hold no secret: a special token, or a value that says there is none.
_NOT_A_SECRET = (
    f"^{_SPECIAL_TOKEN}" + "|[=: \\t\"'](?:[Tt]rue|[Ff]alse|[Nn]one|[Nn]ull|NULL|undefined)[\"']?$"
)
# Characters of one part of a path (a user name).
_PATH_PART = "[^\\/\\\\\\s\"'<>:;,|()\\[\\]]+"
# What can stand before a path that starts at the file system's root.
_PATH_START = "(?:^|[^A-Za-z0-9_.~\\/\\\\-]|-[IL])"
_PEM_BEGIN = "-----BEGIN [A-Z ]*PRIVATE KEY-----"
# Up to three words before a flag's name: --hf-token, --push-to-hub-token.
_FLAG = "--" + "(?:[A-Za-z0-9]+[_-])?" * 3


def _quoted(quote: str) -> Redaction:
    """The rule for a value in ``quote``s: all of it, spaces too, up to the quote."""
    return Redaction(
        "secret-in-" + ("double" if quote == '"' else "single") + "-quotes",
        f"{_STRONG_NAME}{_ASSIGNED}{quote}",
        f"[^{quote}\\s].*?{quote}",
        REDACTED + quote,
        _NOT_A_SECRET,
    )


REDACTIONS: list[Redaction] = [
    # A private key: the whole block; cut off, its header and the lines of key after it.
    Redaction(
        "pem-private-key",
        "",
        f"{_PEM_BEGIN}[A-Za-z0-9+\\/=:,\\s]*-----END [A-Z ]*PRIVATE KEY-----",
    ),
    Redaction("pem-private-key-cut", "", f"{_PEM_BEGIN}[A-Za-z0-9+\\/=\\s]*"),
    Redaction("jwt", "", "\\beyJ[A-Za-z0-9_-]{8,256}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*"),
    # An Authorization header keeps its scheme, whatever it is.
    Redaction(
        "authorization",
        f"\\b{_anycase('authorization')}{_ASSIGNED}[\"']?(?:[A-Za-z][A-Za-z0-9_-]*[ \\t]+)?",
        "[^\\s\"',;]+",
        unless="\\$\\{?[A-Za-z_][A-Za-z0-9_]*\\}?$",  # "Bearer $HF_TOKEN" only names one
    ),
    Redaction("bearer", f"\\b{_anycase('bearer')}[ \\t]+", "[A-Za-z0-9._~+\\/-]{16,}=*"),
    # user:password@ in a URL; the password may hold "@" and "/" (the last "@" ends it),
    # but "host:port/" is no password.
    Redaction(
        "url-credentials",
        "[A-Za-z][A-Za-z0-9+.-]{0,15}:\\/\\/",
        "[^\\s\\/:@]{0,64}:[0-9]*(?:[^\\s\\/0-9@][^\\s\"']{0,199})?@",
        REDACTED + "@",
    ),
    # Formats with a fixed prefix, at their real lengths.
    Redaction("github-token", "", "\\bgh[pousr]_[A-Za-z0-9]{36,}"),
    Redaction("github-fine-grained-token", "", "\\bgithub_pat_[A-Za-z0-9_]{20,}"),
    Redaction("huggingface-token", "", "\\bhf_[A-Za-z0-9]{34,}"),
    Redaction("openai-key", "", "\\bsk-[A-Za-z0-9_-]{20,}"),
    Redaction("google-api-key", "", "\\bAIza[A-Za-z0-9_-]{35}"),
    Redaction("gitlab-token", "", "\\bglpat-[A-Za-z0-9_-]{20,}"),
    Redaction("aws-access-key-id", "", "\\b(?:AKIA|ASIA)[A-Z0-9]{16}\\b"),
    Redaction("slack-token", "", "\\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    # Keys on command lines: "wandb login KEY", "--password X" ("--password=X" is below).
    Redaction(
        "wandb-login",
        f"\\b{_anycase('wandb')}[ \\t]+login[ \\t]+(?:--[A-Za-z-]+[ \\t]+)?",
        "[A-Za-z0-9_][A-Za-z0-9_-]{19,}",
    ),
    Redaction(
        "secret-flag",
        f"{_FLAG}{_ANY_NAME}[ \\t]+[\"']?",
        f"{_FIRST}{_VALUE}*",
        unless=_NOT_A_SECRET,
    ),
    # "name: value" and "name=value", in quotes or not.
    _quoted('"'),
    _quoted("'"),
    Redaction(
        "secret-assignment",
        f"{_STRONG_NAME}{_ASSIGNED}[\"']?",
        f"{_FIRST}{_VALUE}*",
        unless=_NOT_A_SECRET,
    ),
    Redaction(
        "token-assignment",
        f"{_TOKEN}{_ASSIGNED}[\"']?",
        _TOKEN_VALUE,
        unless=f"^{_SPECIAL_TOKEN}|^[^0-9]*$",
    ),
    Redaction(
        "email",
        "",
        "[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+\\.[A-Za-z0-9.-]*[A-Za-z]",
        unless="^git@",
    ),
    # Home folders, the rest of the path kept.
    Redaction(
        "home-windows",
        "",
        f"\\b[A-Za-z]:[\\/\\\\]{{1,2}}{_anycase('users')}[\\/\\\\]{{1,2}}{_PATH_PART}",
        HOME,
    ),
    Redaction("home-unix", _PATH_START, f"\\/(?:home|Users|users)\\/{_PATH_PART}", HOME),
    Redaction("home-of-root", _PATH_START, "\\/root\\b", HOME),
    Redaction("home-below-a-mount", "[A-Za-z0-9_.~-]\\/(?:home|Users)\\/", _PATH_PART, USER),
    Redaction("home-of-user", _PATH_START, "~[A-Za-z_][A-Za-z0-9._-]*\\/", HOME + "/"),
]


class _Canonical(NamedTuple):
    keep: str
    secret: str
    unless: str


def _canonical(rule: Redaction) -> _Canonical:
    """The rule's parts as both engines compile them; ``PatternError`` for a rule outside
    the dialect (checked as a whole, where it backtracks)."""
    compile_pattern(f"({rule.keep})(?:{rule.secret})", min_literal=0)
    return _Canonical(
        compile_pattern(rule.keep, min_literal=0).canonical if rule.keep else "",
        compile_pattern(rule.secret, min_literal=0).canonical,
        compile_pattern(rule.unless, min_literal=0).canonical if rule.unless else "",
    )


def published_redactions() -> list[dict[str, str]]:
    """The rules as ``signatures.json`` carries them for the log page: each part in its
    canonical form; a match of ``(keep)(?:secret)`` becomes what ``keep`` matched, then
    ``replacement``, then the line breaks of the secret, unless ``unless`` matches it."""
    return [
        {"name": rule.name, **_canonical(rule)._asdict(), "replacement": rule.replacement}
        for rule in REDACTIONS
    ]


Replace = Callable[[re.Match[str]], str]


def _replacer(replacement: str, unless: re.Pattern[str] | None) -> Replace:
    def replace(match: re.Match[str]) -> str:
        if unless is not None and unless.search(match.group(0)):
            return match.group(0)
        kept = match.group(1) or ""
        return kept + replacement + "\n" * match.group(0).count("\n", len(kept))

    return replace


@cache
def _rules() -> list[tuple[re.Pattern[str], Replace]]:
    """The table compiled once, from the forms the log page compiles too."""
    compiled = []
    for rule in REDACTIONS:
        canonical = _canonical(rule)
        regex = re.compile(f"({canonical.keep})(?:{canonical.secret})", re.ASCII)
        unless = re.compile(canonical.unless, re.ASCII) if canonical.unless else None
        compiled.append((regex, _replacer(rule.replacement, unless)))
    return compiled


def redact(text: str) -> str:
    """``text`` with every credential, e-mail address and home folder the rules know
    replaced; line breaks stay where they were."""
    for regex, replace in _rules():
        text = regex.sub(replace, text)
    return text


def _constant(replacement: str) -> Replace:
    """Every match becomes ``replacement``."""

    def replace(match: re.Match[str]) -> str:
        return replacement

    return replace


class Redactor:
    """The policy, then this machine's home folder and login name (which only the
    machine that wrote the log knows): what ``failpedia report`` applies."""

    def __init__(self, home: str | None = None, user: str | None = None) -> None:
        self._before: list[tuple[re.Pattern[str], Replace]] = []
        self._after: list[tuple[re.Pattern[str], Replace]] = []
        home = (home or "").rstrip("/\\")
        if len(home) > 1:  # "/" or nothing is no one's
            ending = r"(?=[/\\\s\"'<>:;,|()\[\]]|$)"
            self._before.append((re.compile(re.escape(home) + ending), _constant(HOME)))
        if user and len(user) > 2 and user != "root":
            escaped = re.escape(user)
            self._after.append((re.compile(rf"(?<=[/\\]){escaped}(?=[/\\])"), _constant(USER)))

    def __call__(self, text: str) -> str:
        for regex, replace in self._before:
            text = regex.sub(replace, text)
        text = redact(text)
        for regex, replace in self._after:
            text = regex.sub(replace, text)
        return text
