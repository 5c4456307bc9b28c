"""The issue body of ``failpedia report``: a failure the catalog lacks, handed on as
Markdown (``issue_report``: the diagnosis or the most error-like lines, the environment,
everything a log brings redacted and escaped) with the category and id that would start
its entry (``entry_suggestion``).

Of ``site`` it reads only ``issue_links`` (the issue forms and their fields).
"""

MAY_IMPORT = ("diagnose", "signatures", "site.issue_links")
