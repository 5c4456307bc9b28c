"""``python -m failpedia.cli``: the same as the ``failpedia`` command."""

import sys

from failpedia.cli.main import main

sys.exit(main())
