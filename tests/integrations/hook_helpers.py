"""What the tests of the hook, the notebook extension and the trainer callbacks share."""

from __future__ import annotations

import yaml
from failpedia.settings import read_settings
from sitebuild import REPO

# The entry whose signature torch's error for a head sized for 4 features fed 3 matches.
MATMUL = "matmul-shapes-cannot-be-multiplied"


def entry_url_and_summary(entry: str) -> tuple[str, str]:
    """The entry page's address and the first words of its quick answer."""
    [path] = (REPO / "entries").glob(f"*/{entry}/entry.yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    site = read_settings(REPO).site_url
    return f"{site.rstrip('/')}/{data['category']}/{entry}/", " ".join(data["summary"].split()[:6])
