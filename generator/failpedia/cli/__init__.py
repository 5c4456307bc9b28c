"""The parser (``main``) and one module per command group, each imported when its command
runs; ``run``'s pass-through of a command's output and signals (``passthrough``),
``report``'s issue body (``issue_report``, ``entry_suggestion``).

It sits above every other part.
"""

MAY_IMPORT = ("*",)
