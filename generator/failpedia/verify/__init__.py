"""Results and verdicts, the reproducer's environment, the sandbox (``sandbox``,
bubblewrap; ``cgroups`` for a runner working as root), the launcher that runs a reproducer
and keeps its process tree (``launcher``, standard library only), output capture, scrubbed
by ``signatures.redaction``, the reaper, the runner, the fingerprint, records, release
ranges checked against the installed releases (``release_claims``), and the verification
run that ``failpedia verify`` starts (``verification_run``: selection, progress, records,
summary).

Of the project it reads only ``settings`` (where records go). It reads the log-line rules
and the dialect of ``signatures`` to read output as diagnose does. ``results`` and
``records`` import nothing of the runner, so pages can show proofs without loading it.
``launcher`` imports nothing but the standard library: it runs where the package may not
be importable.
"""

MAY_IMPORT = ("catalog", "signatures", "settings")
