"""The report's screenshots in docs/: the top of the demo's index and of each domain page in headless
Chromium (a 1,400 px wide viewport, 1,400 px tall), quantized to 128 colours.

    benchscore demo --output-dir /tmp/demo-out     # SOURCE_DATE_EPOCH=1767225600 for the dates shown
    python tests/report/screenshots.py /tmp/demo-out docs

Not a test (pytest does not collect it); docs/report.md says which file shows what.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGES = {"index.html": "report-index.png", "tcsexam.html": "report-tcsexam.png", "mira.html": "report-mira.png",
         "rxn.html": "report-rxn.png", "swarm.html": "report-swarm.png"}

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def main(demo_out: Path, docs: Path) -> None:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for page_name, png in PAGES.items():
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto((demo_out / page_name).as_uri(), wait_until="load")
            page.screenshot(path=str(docs / png), full_page=False)
            page.close()
            with Image.open(docs / png) as image:
                image.convert("RGB").quantize(colors=128).save(docs / png, optimize=True)
            print(docs / png)
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
