"""Diagnosis of logs: sources, blocks (with the ``_logbytes`` C helper), stretches read in
parallel, candidate lines with their context, the coarse pass (Hyperscan), the exact pass,
findings, ordering, and output.

May import: ``failpedia.signatures`` only (the index format and the line rules). It never
loads YAML, models or templates: ``failpedia diagnose`` is timed against grep.
"""
