"""The built site: every entry and category has its page, links and anchors resolve."""

from __future__ import annotations

import html
import html.parser
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml
from failpedia.catalog.validate import load_catalog
from failpedia.settings import read_settings
from failpedia.site.render import search_terms
from sitebuild import REPO, copy_site_project, mkdocs_build

CATALOG, _ = load_catalog(REPO / "entries", REPO)


class _PageLinks(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.external_assets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        if values.get("name") and tag == "a":
            self.ids.add(values["name"] or "")
        for attribute in ("href", "src"):
            target = values.get(attribute)
            if not target:
                continue
            if urlsplit(target).scheme in ("http", "https") or target.startswith("//"):
                if tag in ("link", "script", "img") and (
                    tag != "link"
                    or values.get("rel")
                    in (
                        "stylesheet",
                        "preconnect",
                    )
                ):
                    self.external_assets.append(target)
                continue
            if urlsplit(target).scheme:
                continue
            self.links.append(target)


def _parse(page: Path) -> _PageLinks:
    parser = _PageLinks()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


MKDOCS = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
SITE_DESCRIPTION = MKDOCS["site_description"]
SITE_PATH = urlsplit(read_settings(REPO).site_url or "/").path


def _resolve(site: Path, page: Path, link: str) -> tuple[Path, str]:
    """The file and anchor a link points to; root-relative links (404.html) use site_url."""
    parts = urlsplit(link)
    if parts.path.startswith("/"):
        assert parts.path.startswith(SITE_PATH), f"{link} is outside {SITE_PATH}"
        base = site / unquote(parts.path[len(SITE_PATH) :])
    else:
        base = page if not parts.path else (page.parent / unquote(parts.path))
    target = base.resolve()
    if target.is_dir():
        target = target / "index.html"
    return target, unquote(parts.fragment)


def test_every_internal_link_and_anchor_resolves(built_site: Path) -> None:
    pages = sorted(built_site.rglob("*.html"))
    parsed = {page.resolve(): _parse(page) for page in pages}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            target, fragment = _resolve(built_site, page, link)
            if not target.exists():
                broken.append(f"{page.relative_to(built_site.resolve())}: {link} (no file)")
                continue
            if fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if fragment not in ids:
                    broken.append(f"{page.relative_to(built_site.resolve())}: {link} (no anchor)")
    assert not broken, "\n".join(broken)


def test_link_checker_catches_a_broken_link(tmp_path: Path) -> None:
    """The checker above must be able to fail: feed it a page with a dead link and anchor."""
    (tmp_path / "a").mkdir()
    page = tmp_path / "a" / "index.html"
    page.write_text('<h2 id="here">x</h2><a href="../missing/">m</a><a href="#nowhere">n</a>')
    links = _parse(page)
    target, _ = _resolve(tmp_path, page, links.links[0])
    assert not target.exists()
    assert "nowhere" not in links.ids and "here" in links.ids


def test_pages_make_no_external_requests(built_site: Path) -> None:
    offenders = {
        str(page.relative_to(built_site)): _parse(page).external_assets
        for page in built_site.rglob("*.html")
        if _parse(page).external_assets
    }
    assert not offenders


def test_each_entry_page_has_every_section_in_order(built_site: Path) -> None:
    assert CATALOG.entries, "the catalog is empty"
    for item in CATALOG.entries:
        page = built_site / item.entry.category / item.entry.id / "index.html"
        text = page.read_text(encoding="utf-8")
        text = text[text.index("<article") : text.index("</article>")]
        # The answer first: quick answer, the fix, then why and how to confirm. An entry
        # documented from reports has no check and no reproducer: its proof is the reports.
        proved = item.entry.reproducer is not None
        headings = ["Quick answer</p>", 'id="fix"']
        headings += ['id="how-the-fix-was-checked"'] if proved else []
        headings += ['id="what-happens"', 'id="confirm-it"', 'id="affects"']
        headings += ['id="full-messages"', 'id="proof"']
        headings += ['id="reproducer"'] if proved else []
        positions = [text.find(heading) for heading in headings]
        assert all(position >= 0 for position in positions), (item.entry.id, positions)
        assert positions == sorted(positions), item.entry.id
        first_line = item.entry.signatures[0].text.splitlines()[0].strip()
        visible = _visible_text(text)
        # Markdown expands a tab in a code block to spaces (transformers' load report has one).
        words = " ".join(first_line.split())
        assert words in " ".join(visible.split()), item.entry.id
        assert f"entries/{item.entry.category}/{item.entry.id}/entry.yaml" in text
        if not proved:
            assert item.entry.evidence is not None
            reports = len(item.entry.evidence.reports)
            assert (
                f"Documented from {reports} public reports; no reproducer can trigger it on demand."
            ) in visible, item.entry.id
            assert 'id="reproducer"' not in text, item.entry.id
            continue
        assert item.fix_code, item.entry.id
        for code_line in item.fix_code.splitlines():
            assert code_line.strip() in visible, (item.entry.id, code_line)


def test_every_entry_page_keeps_its_front_matter(built_site: Path) -> None:
    """Title, description and search terms reach the page: mkdocs drops a page's whole front
    matter without a word when it fails to parse (an emoji written as a JSON escape did)."""
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    tags = {doc["location"]: doc.get("tags") for doc in index["docs"]}
    for item in CATALOG.entries:
        location = f"{item.entry.category}/{item.entry.id}/"
        assert tags.get(location) == search_terms(item), item.entry.id
        page = (built_site / location / "index.html").read_text(encoding="utf-8")
        description = re.search(r'<meta name="description" content="([^"]*)"', page)
        assert description and description.group(1) != html.escape(SITE_DESCRIPTION), item.entry.id


def _visible_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_category_pages_list_every_entry_and_home_counts_them(built_site: Path) -> None:
    home = (built_site / "index.html").read_text(encoding="utf-8")
    for category in CATALOG.categories:
        page = (built_site / category.id / "index.html").read_text(encoding="utf-8")
        entries = CATALOG.in_category(category.id)
        for item in entries:
            assert f'href="{item.entry.id}/"' in page, (category.id, item.entry.id)
        assert f"{category.id}/" in home
        assert f'<td style="text-align: right;">{len(entries)}</td>' in home


def test_entries_stay_out_of_the_navigation(built_site: Path) -> None:
    home = (built_site / "index.html").read_text(encoding="utf-8")
    nav = home[home.find('<nav class="md-nav md-nav--primary"') :]
    nav = nav[: nav.find('class="md-content"')]
    for item in CATALOG.entries:
        assert f"{item.entry.category}/{item.entry.id}/" not in nav
    for category in CATALOG.categories:
        assert f"{category.id}/" in nav


def test_a_broken_entry_fails_the_build_with_its_location(tmp_path: Path) -> None:
    project = copy_site_project(tmp_path / "project")
    entry = project / "entries/compile/dynamo-recompile-limit/entry.yaml"
    entry.write_text(entry.read_text().replace("kind: warning", "kind: warnin"))
    site = tmp_path / "site"
    result = mkdocs_build(project, site, "--strict")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "entries/compile/dynamo-recompile-limit/entry.yaml:" in output
    assert "kind: must be one of" in output
    assert "Traceback" not in output
    assert not (site / "index.html").exists()


def test_home_lists_the_failures_real_logs_show_most(built_site: Path) -> None:
    """Counted from benchmarks/realworld/cases: each listed entry with its number of logs,
    most first."""
    import re
    from collections import Counter

    cases = Path(__file__).resolve().parents[2] / "benchmarks" / "realworld" / "cases"
    counts = Counter(
        found.group(1)
        for path in cases.glob("*.yaml")
        if (found := re.search(r"^expected: (\S+)", path.read_text(encoding="utf-8"), re.M))
        and found.group(1) in CATALOG.by_id
    )
    home = (built_site / "index.html").read_text(encoding="utf-8")
    section = home[home.index('id="most-common-failures"') : home.index('id="categories"')]
    listed = []
    for item in re.findall(r"<li>(.*?)</li>", section, re.S):
        href = re.search(r'href="([^"]+)"', item)
        count = re.search(r"\((\d+) logs?\)\s*$", item)
        assert href and count, item
        listed.append((href.group(1).rstrip("/").split("/")[-1], int(count.group(1))))
    assert listed and len(listed) <= 8
    assert [count for _, count in listed] == sorted((count for _, count in listed), reverse=True)
    for entry_id, count in listed:
        assert counts[entry_id] == count, entry_id
    assert listed[0][1] == max(counts.values())


# Slips a template or an entry's text can make: an article before a plural or another
# article ("it needs a several CUDA GPUs"), and a proof claimed where none is recorded.
ARTICLE_SLIP = re.compile(r"\b(?:a|an) (?:several|a|an|the)\b", re.IGNORECASE)
PROOF_CLAIM = re.compile(
    r"reproducer proves|proved by the reproducer|the fix the reproducer proves", re.IGNORECASE
)


def _prose(markup: str) -> str:
    """A page's visible text without its code: log lines and commands may say anything."""
    without_code = re.sub(r"<(pre|code|script|style)\b.*?</\1>", " ", markup, flags=re.DOTALL)
    return _visible_text(without_code)


def test_pages_make_no_template_slips_and_claim_no_missing_proof(built_site: Path) -> None:
    slips = []
    for page in sorted(built_site.rglob("*.html")):
        markup = page.read_text(encoding="utf-8")
        prose = _prose(markup)
        where = page.relative_to(built_site)
        slips += [f"{where}: {match.group(0)!r}" for match in ARTICLE_SLIP.finditer(prose)]
        if "Not yet proved" in prose:
            slips += [f"{where}: {match.group(0)!r}" for match in PROOF_CLAIM.finditer(prose)]
    assert not slips, "\n".join(slips)
