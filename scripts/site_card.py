"""Draw the site card (docs/assets/failpedia-card.png): the one picture link previews
and search results show for every page (og:image). Run again when the site's name or
description changes: ``python3 scripts/site_card.py``. Needs Playwright and Chromium."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "docs" / "assets" / "failpedia-card.png"
CHROMIUM = "/usr/bin/chromium"

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; width: 1200px; height: 630px; background: #1e2129; color: #e8eaf0;
       font-family: "DejaVu Sans", sans-serif; display: flex; flex-direction: column;
       justify-content: center; padding: 0 90px; box-sizing: border-box; }
h1 { font-size: 104px; margin: 0 0 24px; letter-spacing: -2px; }
p { font-size: 42px; margin: 0 0 56px; color: #b8bfd0; line-height: 1.3; }
pre { font-family: "DejaVu Sans Mono", monospace; font-size: 26px; margin: 0;
      color: #ff8a80; background: #2a2e38; padding: 22px 28px; border-radius: 10px; }
</style></head><body>
<h1>Failpedia</h1>
<p>ML training failures: what the message means, the fix, and a reproducer that proves it.</p>
<pre>RuntimeError: CUDA error: device-side assert triggered</pre>
</body></html>"""


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1200, "height": 630})
        page.set_content(PAGE)
        page.screenshot(path=str(CARD))
        browser.close()
    print(f"{CARD.relative_to(ROOT)}: {CARD.stat().st_size} bytes")


if __name__ == "__main__":
    main()
