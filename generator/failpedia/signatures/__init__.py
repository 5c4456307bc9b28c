"""Signatures: the portable pattern dialect, its Hyperscan form, the one module of
log-line rules (ANSI, prefixes, line cap, error-like words, root-cause marker) that Python
and the browser worker both read, and the signature index format.

May import: nothing of ours.
"""
