"""One web address, as a URL field (a reference's ``url``) must hold.

Pages put these addresses into Markdown links, so an address must be nothing but an
address: http or https, a host name, then only characters a URL may carry unencoded and
parentheses that pair up. Whitespace, quotes, angle and square brackets, backslashes or a
stray ``)`` could end the link early and start Markdown of their own
(``https://example.org/)[x](javascript:...)``).
"""

from __future__ import annotations

import re

_WEB_URL = re.compile(r"https?://(?P<host>[^/?#]*)(?P<rest>[/?#].*)?", re.IGNORECASE | re.DOTALL)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}(?::[0-9]{{1,5}})?")
_URL_CHARACTER = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]")


def web_url_problem(url: str) -> str | None:
    """Why ``url`` is not one well-formed http(s) address, or None."""
    match = _WEB_URL.fullmatch(url)
    if match is None:
        return "it must start with http:// or https://"
    if not _HOST.fullmatch(match.group("host")):
        return f"{match.group('host')!r} is not a host name"
    depth = 0
    for character in match.group("rest") or "":
        if not _URL_CHARACTER.fullmatch(character):
            return f"{character!r} must be percent-encoded"
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth < 0:
            return "a ')' closes no '('"
    if depth:
        return "a '(' is never closed"
    return None
