"""Verification: results and verdicts, the reproducer's environment, the sandbox
(bubblewrap, and a pids cgroup for a runner working as root), the launcher that runs a
reproducer and keeps its whole process tree, output capture with credential scrubbing,
the process reaper, the runner, the environment fingerprint, and records.

May import: ``failpedia.catalog``, ``failpedia.signatures`` (the log-line rules and the
dialect, to read output as diagnose does). ``results`` and ``records`` import nothing
of the runner, so pages can show proofs without loading it. ``launcher`` imports nothing
but the standard library: it runs where the package may not be importable.
"""
