"""The command line only: the parser (``main``) and one module per command group, each
imported when its command runs, that turns arguments into a call of the part that does
the work (``project``, ``verify.verification_run``, ``wrap``, ``report``, ``site``).

It sits above every other part.
"""

MAY_IMPORT = ("*",)
