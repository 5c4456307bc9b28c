"""Sources, blocks (``_logbytes.c``), stretches, candidate lines, the coarse pass
(Hyperscan), the exact pass and its tally (``matching``), findings, ordering, the entries
nearest in wording (``nearest``, lunr), output, and the live diagnosis of streams as they
arrive (``live``, what ``failpedia run`` feeds).

Of ``signatures`` it reads the index format and the line rules. It never loads YAML,
models or templates: ``failpedia diagnose`` is timed against grep.
"""

MAY_IMPORT = ("signatures",)
