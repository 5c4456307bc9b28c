"""Entry pages as a search engine reads them, and the line under their title: schema.org
JSON-LD (TechArticle, FAQPage) in the head, a canonical address and a site card, titles
cut only between clauses, sitemap dates from each entry's last commit; under the title
the id, the releases that print it and the newest proof; "Caused by" under the answer.
"""

from __future__ import annotations

import html
import html.parser
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from failpedia.catalog.validate import load_catalog
from failpedia.site.render import CAUSED_BY_SHOWN
from helpers import LIMIT, copy_fixture, entry_data, write_entry_data
from sitebuild import REPO, SiteServer, build_site

CATALOG, _ = load_catalog(REPO / "entries", REPO)
LD_JSON = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)
CLAUSE_ENDS = (" (", " / ", " - ", ". ", "; ", "! ", "? ")


def _page(site: Path, category: str, entry_id: str) -> str:
    return (site / category / entry_id / "index.html").read_text(encoding="utf-8")


def _structured(page: str) -> dict[str, dict]:
    head = page[: page.index("<body")]
    scripts = LD_JSON.findall(head)
    assert len(scripts) == 1, f"{len(scripts)} JSON-LD scripts"
    return {item["@type"]: item for item in json.loads(scripts[0])}


class _Text(html.parser.HTMLParser):
    """The page's visible text, and the text of each <h3> after the FAQ heading."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.questions: list[str] = []
        self._hidden: str | None = None  # the tag whose text is not shown as prose
        self._in_faq = False
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in ("script", "style") or "headerlink" in (values.get("class") or ""):
            self._hidden = tag
        if tag == "h2":
            self._in_faq = values.get("id") == "faq"
        if tag == "h3" and self._in_faq:
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._hidden:
            self._hidden = None
        if tag == "h3" and self._heading is not None:
            self.questions.append(" ".join("".join(self._heading).split()))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        self.parts.append(data)
        if self._heading is not None:
            self._heading.append(data)


def _read(page: str) -> _Text:
    article = page[page.index("<article") : page.index("</article>")]
    reader = _Text()
    reader.feed(article)
    return reader


def _flat(text: str) -> str:
    return " ".join(text.split())


def _git_date(path: str) -> str | None:
    """The committer date of the last commit touching ``path``; None in a shallow clone
    or outside git, where the site claims no date."""
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"], cwd=REPO, capture_output=True, text=True
    )
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        return None
    done = subprocess.run(
        ["git", "log", "-1", "--format=%cI", "--", path], cwd=REPO, capture_output=True, text=True
    )
    return done.stdout.strip() or None


def test_every_entry_page_carries_a_tech_article_and_its_faq(built_site: Path) -> None:
    assert CATALOG.entries
    for item in CATALOG.entries:
        entry = item.entry
        page = _page(built_site, entry.category, entry.id)
        canonical = re.search(r'<link rel="canonical" href="([^"]+)"', page)
        assert canonical, entry.id
        url = canonical.group(1)
        assert url.endswith(f"/{entry.category}/{entry.id}/"), (entry.id, url)
        assert '<meta property="og:image" content="https://' in page, entry.id
        items = _structured(page)
        article = items["TechArticle"]
        assert article["@context"] == "https://schema.org"
        assert article["headline"] and len(article["headline"]) <= 110, entry.id
        assert article["url"] == url and article["mainEntityOfPage"] == url
        assert article["image"].endswith("/assets/failpedia-card.png")
        # What it is about: the messages the page shows under Full messages.
        reader = _read(page)
        visible = _flat("".join(reader.parts))
        names = [thing["name"] for thing in article["about"]]
        assert names and all(_flat(name) in visible for name in names), entry.id
        assert article.get("dateModified") == _git_date(f"entries/{entry.category}/{entry.id}")
        if not entry.faq:
            assert "FAQPage" not in items, entry.id
            continue
        faq = items["FAQPage"]["mainEntity"]
        assert [question["name"] for question in faq] == reader.questions, entry.id
        for question in faq:
            answer = question["acceptedAnswer"]["text"]
            assert answer and _flat(answer)[:60] in visible, (entry.id, answer[:60])


def test_the_card_every_page_names_is_published(built_site: Path) -> None:
    card = built_site / "assets" / "failpedia-card.png"
    data = card.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) < 200_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 630)
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'content="https://failpedia.github.io/failpedia/assets/failpedia-card.png"' in home


def test_sitemap_dates_are_each_entrys_last_commit(built_site: Path) -> None:
    sitemap = (built_site / "sitemap.xml").read_text(encoding="utf-8")
    dates = dict(
        re.findall(r"<loc>([^<]+)</loc>\s*(?:<lastmod>([^<]*)</lastmod>)?\s*</url>", sitemap)
    )
    for item in CATALOG.entries:
        url = f"https://failpedia.github.io/failpedia/{item.entry.category}/{item.entry.id}/"
        assert url in dates, item.entry.id
        expected = _git_date(f"entries/{item.entry.category}/{item.entry.id}") or ""
        assert dates[url] == expected, item.entry.id
    # A page no commit dates (the generated home page) claims no date, not the build's.
    assert dates["https://failpedia.github.io/failpedia/"] == ""


def _without_code_marks(title: str) -> str:
    """A title's text as read: Markdown's code spans lose their backtick runs (and the one
    space inside each end), keeping a backtick the message holds (```` `` `X' `` ````)."""
    return re.sub(r"(`+) ?(.*?) ?\1", r"\2", title)


def test_titles_are_whole_or_cut_between_clauses(built_site: Path) -> None:
    for item in CATALOG.entries:
        page = _page(built_site, item.entry.category, item.entry.id)
        title = html.unescape(re.search(r"<title>(.*?)</title>", page, re.S).group(1))
        assert title.endswith(" · Failpedia"), title
        shown = title.removesuffix(" · Failpedia")
        full = _flat(_without_code_marks(item.entry.title))
        assert "…" not in shown, item.entry.id
        assert full.startswith(shown), (item.entry.id, shown)
        rest = full[len(shown) :]
        assert rest == "" or rest.startswith(CLAUSE_ENDS), (item.entry.id, shown)
        assert len(shown) >= 24 or shown == full, (item.entry.id, shown)


def _meta_line(page: str) -> str:
    found = re.search(r'<span class="fp-entry-meta">(.*?)</span></p>', page, re.S)
    assert found, "no metadata line"
    return _flat(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_line_under_the_title_names_id_releases_and_proof(built_site: Path) -> None:
    checked_releases = checked_proofs = 0
    for item in CATALOG.entries:
        entry = item.entry
        page = _page(built_site, entry.category, entry.id)
        line = _meta_line(page)
        assert line.startswith(f"Id {entry.id}"), (entry.id, line)
        # Releases: from the signatures' ranges, each package from its earliest release.
        firsts: dict[str, str] = {}
        for signature in entry.signatures:
            for claim in signature.releases:
                known = firsts.get(claim.package)
                if known is None or _release(claim.first) < _release(known):
                    firsts[claim.package] = claim.first
        for package, first in firsts.items():
            assert f"{package} {first}" in line, (entry.id, line)
            checked_releases += 1
        if not firsts:
            assert "Printed by" not in line, (entry.id, line)
        # Proof: the newest proving run of the verification record, where the page says
        # the entry is proved.
        record = REPO / "verification" / f"{entry.id}.json"
        header = page[page.index("<article") :][:3000]
        if record.exists() and ">Proved on" in header:
            results = json.loads(record.read_text(encoding="utf-8"))["results"]
            proved = [result for result in results if result["verdict"] == "proved"]
            newest = max(proved, key=lambda result: result["started_at"])
            assert f"Last proved {newest['started_at'][:10]} on " in line, (entry.id, line)
            checked_proofs += 1
        else:
            assert "Last proved" not in line, (entry.id, line)
    assert checked_releases and checked_proofs


def test_copy_link_copies_the_entrys_address(built_site: Path, site_url: str, browser) -> None:
    item = CATALOG.entries[0]
    category, entry_id = item.entry.category, item.entry.id
    # The page itself holds no button (a reader without scripts gets none that does
    # nothing); the script adds it.
    assert "fp-copy-link" not in _page(built_site, category, entry_id)
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        tab = context.new_page()
        tab.goto(f"{site_url}/{category}/{entry_id}/#fix")
        tab.click(".fp-entry-id .fp-copy-link")
        tab.wait_for_function(
            "document.querySelector('.fp-copy-link').textContent === 'Link copied'"
        )
        copied = tab.evaluate("navigator.clipboard.readText()")
    finally:
        context.close()
    assert copied == f"https://failpedia.github.io/failpedia/{category}/{entry_id}/"


def test_caused_by_links_sit_right_under_the_quick_answer(built_site: Path) -> None:
    causes: dict[str, set[str]] = {}
    for item in CATALOG.entries:
        for related in item.entry.related:
            if related.relation == "causes":
                causes.setdefault(related.id, set()).add(item.entry.id)
            elif related.relation == "caused-by":
                causes.setdefault(item.entry.id, set()).add(related.id)
    by_id = {item.entry.id: item for item in CATALOG.entries}
    causes = {key: value for key, value in causes.items() if key in by_id}
    assert causes
    for item in CATALOG.entries:
        page = _page(built_site, item.entry.category, item.entry.id)
        article = page[page.index("<article") :]
        answer_end = article.index("</div>", article.index("Quick answer</p>"))
        following = article[answer_end + len("</div>") :].lstrip()
        if item.entry.id not in causes:
            assert "Caused by:" not in following[:200], item.entry.id
            continue
        assert following.startswith("<p><strong>Caused by:</strong>"), item.entry.id
        paragraph = following[: following.index("</p>")]
        linked = set(re.findall(r'href="[^"]*/([^/"]+)/"', paragraph))
        every = causes[item.entry.id]
        shown = min(len(every), CAUSED_BY_SHOWN)
        assert linked <= every and len(linked) == shown, item.entry.id
        if len(every) > shown:
            # the rest are a link away: the Related section lists every cause
            assert f'href="#caused-by">{len(every) - shown} more</a>' in paragraph, item.entry.id
            section = article[article.index('id="caused-by"') :]
            section = section[: section.index("</ul>")]
            assert set(re.findall(r'href="[^"]*/([^/"]+)/"', section)) == every, item.entry.id


# An entry written to end the JSON-LD script early and run its own.
BREAKOUT = "</script><script>document.documentElement.dataset.pwnedld=1</script>"


@pytest.fixture(scope="module")
def breakout_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_fixture(tmp_path_factory.mktemp("breakout"))
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for name in ("docs", "templates"):
        shutil.copytree(REPO / name, root / name)
    data = entry_data(root, LIMIT)
    data["title"] = f"Widget limit `{BREAKOUT}`"
    data["faq"] = [
        {"question": f"Why `{BREAKOUT}`?", "answer": f"Because `{BREAKOUT}` & `<!--` x."}
    ]
    write_entry_data(root, LIMIT, data)
    return build_site(root, tmp_path_factory.mktemp("breakout-site"))


def test_entry_text_cannot_end_the_json_ld_script(breakout_site: Path, browser) -> None:
    category, entry_id = LIMIT.split("/")
    page = _page(breakout_site, category, entry_id)
    head = page[: page.index("<body")]
    (script,) = LD_JSON.findall(head)
    assert "<" not in script and ">" not in script and "&" not in script
    items = {item["@type"]: item for item in json.loads(script)}
    assert items["TechArticle"]["name"] == f"Widget limit {BREAKOUT}"
    (question,) = items["FAQPage"]["mainEntity"]
    assert question["name"] == f"Why {BREAKOUT}?"
    assert question["acceptedAnswer"]["text"] == f"Because {BREAKOUT} & <!-- x."
    # Outside git, no date is claimed.
    assert "dateModified" not in items["TechArticle"]
    assert "<lastmod>" not in (breakout_site / "sitemap.xml").read_text(encoding="utf-8")
    with SiteServer(breakout_site) as server:
        tab = browser.new_page()
        tab.goto(f"{server.url}/{category}/{entry_id}/")
        read_back = tab.evaluate(
            """() => Array.from(document.querySelectorAll('script[type="application/ld+json"]'),
                                script => JSON.parse(script.textContent))"""
        )
        marks = tab.evaluate("() => Object.keys(document.documentElement.dataset)")
        tab.close()
    assert [item["@type"] for item in read_back[0]] == ["TechArticle", "FAQPage"]
    assert "pwnedld" not in marks
