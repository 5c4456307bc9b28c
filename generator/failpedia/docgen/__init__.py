"""The documents generated from the interface (``failpedia docs``): the marked regions of
``README.md`` and ``CONTRIBUTING.md`` that hold the command table and the exit codes (from
the parser), the entry's field table (from the model) and the table of parts (from each
part's declaration, ``layering``), rewritten between their markers, or checked as CI does,
so a new option, field or part cannot leave the documents behind.

``cli`` passes the parser and the exit codes in, so this part reads nothing of it.
"""

MAY_IMPORT = ("catalog",)
