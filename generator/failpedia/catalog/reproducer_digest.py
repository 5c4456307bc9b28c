"""What a proof is a proof of: a digest of the reproducer's files and the entry's patterns.

A record says a reproducer proved its fix; once the script, a file beside it or a pattern
changes, that record proves nothing about the new version. The runner stores this digest
in every result and pages compare it with the entry as it is now. The rest of
``entry.yaml`` (the text a reader sees) does not change what was proved and is left out.
"""

from __future__ import annotations

import hashlib

from failpedia.catalog.bounded_read import RefusedFile, read_bounded
from failpedia.catalog.catalog import CatalogEntry
from failpedia.catalog.entry_files import ENTRY_FILENAME, MAX_FILE_BYTES


def reproducer_digest(item: CatalogEntry) -> str:
    """A short sha256 over the entry folder's files (but ``entry.yaml``) and its patterns."""
    digest = hashlib.sha256()
    for path in sorted(item.folder.iterdir()):
        if path.name == ENTRY_FILENAME or path.name.startswith(".") or not path.is_file():
            continue
        try:
            data = read_bounded(path, within=item.folder, limit=MAX_FILE_BYTES)
        except RefusedFile as refused:
            data = f"unreadable: {refused.message}".encode()
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(data).digest())
    for signature in item.entry.signatures:
        digest.update(b"pattern\0" + signature.pattern.encode())
    return digest.hexdigest()[:24]
