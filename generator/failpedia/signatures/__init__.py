"""The portable pattern dialect (``dialect``), its Hyperscan form, the one module of
log-line rules (``line_rules``: ANSI, prefixes, line cap, error-like words, the root-cause
marker) that Python and the log page's worker both read, the one redaction policy for
shared log text (``redaction``: ``report``, ``run``'s diagnosis, captured output, and the
log page, which reads it from the index), the order findings are listed in
(``finding_order``: its keys, roles and kinds, the summary line's words, published in the
index), the issue forms links fill (``issue_forms``, published in the index), how entries
nearest in wording are looked up when nothing matches (``nearest_rules``, published in
``nearest.json``), the index format.

Every other part reads these rules, so this one reads no other.
"""

MAY_IMPORT: tuple[str, ...] = ()
