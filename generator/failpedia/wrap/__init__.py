"""The wrapped run of ``failpedia run -- CMD``: the command's output passed through
unchanged and live (``passthrough``: pseudo-terminals, signals, the terminal's
foreground), matched in a process of its own fed through a spool on disk
(``background_matching``), and the run with its diagnosis (``wrapped_run``).

It reads the index through what the command line hands it (an opener, and the nearest
entries of a diagnosis), never the project or the catalog itself.
"""

MAY_IMPORT = ("diagnose", "signatures")
