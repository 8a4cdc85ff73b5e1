"""The rendered book, as a reader's browser shows it (headless Chromium, see conftest).

For every page: it loads with no JavaScript error and no broken local resource, shows
no raw widget placeholder, dark mode toggles, and a screenshot lands in
``_build/screenshots/``. For every lesson page (``notebooks/...``): at least one
rendered figure, its verdict box, and Binder and Colab launch buttons whose URLs point
at the repository of ``_config.yml``; every figure has a caption and alt text that
says what it shows. Search finds a chapter-3 term.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote, urlparse

import bookconfig
import pytest

SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static", "_panels_static"}
WIDGET_REPR = re.compile(
    r"\b(?:Int|Float)(?:Range)?Slider\(|\binteractive\(children=|\b[HV]Box\(children=|"
    r"Loading widgets?\.\.\.|\bOutput\(\)"
)
GENERIC_ALT = re.compile(r"^(?:output|image|figure|plot|png|svg|graph|chart)[\s_.-]*\w*$", re.I)
MATHJAX_CDN = re.compile(r"^https://cdn\.jsdelivr\.net/npm/mathjax@3/es5/(.+)$")


def _pages() -> list[str]:
    root = bookconfig.built_html()
    if not root.is_dir():
        return []
    pages = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIP_DIRS or rel.as_posix() == "index.html":  # index: a redirect
            continue
        pages.append(rel.as_posix())
    return pages


PAGES = _pages()
LESSONS = [p for p in PAGES if p.startswith("notebooks/")]


def _shot_name(page: str) -> str:
    return page.removesuffix(".html").replace("/", "__") + ".png"


def _stub_external(route) -> None:
    """Never touch the network: serve MathJax from a local copy if given, else stub."""
    url = route.request.url
    local = os.environ.get("LIVINGDICT_MATHJAX_DIR")
    m = MATHJAX_CDN.match(url)
    if local and m and (Path(local) / m.group(1)).is_file():
        route.fulfill(path=str(Path(local) / m.group(1)), content_type="application/javascript")
    elif url.endswith(".css"):
        route.fulfill(status=200, body="", content_type="text/css")
    else:
        route.fulfill(status=200, body="", content_type="application/javascript")


def new_context(browser, site: str, scheme: str = "light"):
    """A fresh browser context whose requests never leave the local server."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    host = urlparse(site).netloc
    context.route(lambda url: urlparse(url).netloc != host, _stub_external)
    return context


class Visit:
    """One page in a fresh browser context, with its console errors and failed loads."""

    def __init__(self, browser, site: str, page: str, scheme: str = "light"):
        self.context = new_context(browser, site, scheme)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        host = urlparse(site).netloc
        self.page.on(
            "console",
            lambda msg: msg.type == "error" and self.errors.append(f"console: {msg.text}"),
        )
        self.page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        self.page.on(
            "response",
            lambda r: (
                r.status >= 400
                and urlparse(r.url).netloc == host
                and self.errors.append(f"HTTP {r.status}: {r.url}")
            ),
        )
        self.page.goto(site + page, wait_until="load")
        self.page.wait_for_load_state("networkidle")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser, site):
    opened: list[Visit] = []

    def _open(page: str, scheme: str = "light") -> Visit:
        v = Visit(browser, site, page, scheme)
        opened.append(v)
        return v

    yield _open
    for v in opened:
        v.close()


def test_the_book_has_pages():
    assert PAGES, f"no HTML pages under {bookconfig.built_html()}: build the book first"
    assert LESSONS, "no lesson pages (notebooks/...) in the built book"


def _theme(page) -> str:
    return page.evaluate("document.documentElement.dataset.theme")


def _background_luminance(page) -> float:
    rgb = page.evaluate("getComputedStyle(document.body).backgroundColor")
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", rgb)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _toggle_to(page, mode: str) -> None:
    button = page.locator(".theme-switch-button:visible").first
    for _ in range(4):
        if _theme(page) == mode:
            return
        button.click()
    assert _theme(page) == mode, f"the theme button never reached {mode!r}"


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_cleanly(visit, screenshots, page):
    v = visit(page)
    p = v.page
    assert p.locator("main#main-content").count() == 1, "no main content: the page did not render"
    # widgets are dead in static HTML: the book shows a static figure instead
    assert p.locator('script[type="application/vnd.jupyter.widget-view+json"]').count() == 0
    for text in p.locator(".cell_output").all_inner_texts():
        assert not WIDGET_REPR.search(text), f"raw widget placeholder in an output: {text[:200]!r}"
    p.screenshot(path=str(screenshots / _shot_name(page)), full_page=True)
    # dark mode toggles, and the page really turns dark
    assert _theme(p) == "light"
    light = _background_luminance(p)
    _toggle_to(p, "dark")
    dark = _background_luminance(p)
    assert dark < 0.25 < light, f"background luminance light {light:.2f}, dark {dark:.2f}"
    if page in LESSONS:
        shot = screenshots / "dark" / _shot_name(page)
        shot.parent.mkdir(exist_ok=True)
        p.screenshot(path=str(shot), full_page=True)
    _toggle_to(p, "light")
    assert not v.errors, "\n".join(v.errors)


@pytest.mark.parametrize("page", LESSONS)
def test_lesson_shows_figure_verdict_and_launch_buttons(visit, page):
    p = visit(page).page
    images = p.locator("article .cell_output img")
    assert images.count() >= 1, "a lesson shows at least one rendered figure"
    widths = images.evaluate_all("(imgs) => imgs.map((i) => i.complete ? i.naturalWidth : 0)")
    assert all(w > 0 for w in widths), f"figures that did not load: widths {widths}"
    verdict = p.locator("article .admonition.verdict")
    assert verdict.count() >= 1 and verdict.first.is_visible(), "no verdict box"
    assert "Verdict" in verdict.first.inner_text()
    assert p.locator(".dropdown-launch-buttons button").first.is_visible(), "no launch button"
    docname = page.removesuffix(".html")
    hrefs = p.locator(".dropdown-launch-buttons a").evaluate_all("(as) => as.map((a) => a.href)")
    assert bookconfig.binder_url(docname) in hrefs, f"Binder URL wrong or missing: {hrefs}"
    assert bookconfig.colab_url(docname) in hrefs, f"Colab URL wrong or missing: {hrefs}"


def _alt_problem(alt: str | None) -> str | None:
    alt = (alt or "").strip()
    if not alt:
        return "no alt text"
    if (
        "/" in alt
        or re.search(r"\.(png|svg|jpe?g)$", alt, re.I)
        or re.fullmatch(r"[0-9a-f]{16,}", alt)
    ):
        return f"alt text is a file name: {alt[:60]!r}"
    if GENERIC_ALT.match(alt) or alt.startswith("<Figure size") or len(alt.split()) < 4:
        return f"alt text does not say what the figure shows: {alt!r}"
    return None


@pytest.mark.parametrize("page", LESSONS)
def test_lesson_figures_have_caption_and_alt_text(visit, page):
    p = visit(page).page
    figures = p.locator("article .cell_output img").evaluate_all(
        """(imgs) => imgs.map((i) => {
            const fig = i.closest('figure');
            const cap = fig ? fig.querySelector('figcaption') : null;
            return {alt: i.getAttribute('alt'), caption: cap ? cap.innerText.trim() : ''};
        })"""
    )
    problems = []
    for n, fig in enumerate(figures, 1):
        issue = _alt_problem(fig["alt"])
        if issue:
            problems.append(f"figure {n}: {issue}")
        if len(fig["caption"].split()) < 3:
            problems.append(f"figure {n}: no caption (mystnb figure metadata, see README)")
    assert not problems, "\n".join(problems)


def _chapter3_page() -> str | None:
    landing = [p for p in PAGES if re.match(r"book/ch3_", p)]
    lessons = [p for p in PAGES if p.startswith("notebooks/03_")]
    return (landing or lessons or [None])[0]


def _search(p, site_page: str, term: str) -> list[str]:
    p.goto(site_page + "search.html?q=" + quote(term), wait_until="load")
    p.wait_for_selector("#search-results p.search-summary", timeout=15_000)
    links = p.locator("#search-results ul.search li a").evaluate_all(
        "(as) => as.map((a) => a.getAttribute('href'))"
    )
    return [urlparse(h).path.lstrip("/") for h in links]


def _title_word(p, site: str, page: str) -> str:
    p.goto(site + page, wait_until="load")
    title = p.locator("article h1").first.inner_text()
    words = sorted(re.findall(r"[A-Za-z]{5,}", title), key=len, reverse=True)
    assert words, f"no searchable word in the title {title!r} of {page}"
    return words[0].lower()


def test_search_finds_a_lesson(browser, site):
    lesson = LESSONS[0]
    context = new_context(browser, site)
    try:
        p = context.new_page()
        term = _title_word(p, site, lesson)
        found = _search(p, site, term)
        assert lesson in found, f"searching {term!r} did not find {lesson}: {found}"
    finally:
        context.close()


def test_search_finds_a_chapter_3_term(browser, site):
    page = _chapter3_page()
    if page is None:
        pytest.skip("no chapter-3 page in this build yet")
    context = new_context(browser, site)
    try:
        p = context.new_page()
        term = _title_word(p, site, page)
        found = _search(p, site, term)
        assert page in found, f"searching {term!r} did not find {page}: {found}"
    finally:
        context.close()
