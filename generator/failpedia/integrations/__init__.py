"""Diagnosis in the process itself: the hooks that print the catalog's entries under a
traceback (``sys.excepthook``, ``threading.excepthook``, with the warnings recorded before
it), the IPython extension (``%load_ext failpedia``) and the callbacks for the Hugging Face
``Trainer`` and Lightning, each changing nothing of the traceback, the exception or the
exit status.

Of ``project`` it reads only ``index_source`` (where ``diagnose`` finds the index: the
package's, or the project's entries compiled through the cache). ``excepthook``
imports nothing but the standard library when it is imported: the matcher is loaded when
an exception ends a script or a cell, never before. Nothing here ever raises itself.
"""

MAY_IMPORT = ("diagnose", "signatures", "project.index_source")
