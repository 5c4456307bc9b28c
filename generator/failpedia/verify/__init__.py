"""Verification: results and verdicts, the reproducer's environment, output capture, the
process reaper, the runner, the environment fingerprint, and records.

May import: ``failpedia.catalog``, ``failpedia.signatures`` (the log-line rules and the
dialect, to read output as diagnose does). ``results`` and ``records`` import nothing
of the runner, so pages can show proofs without loading it.
"""
