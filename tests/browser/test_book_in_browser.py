"""The rendered book, as a reader's browser shows it (headless Chromium, see conftest).

For every page (each visited once, in one tab that keeps the cache and clears the
storage: every visit is a reader's first): it loads with no JavaScript error and no
broken local resource, shows no raw widget placeholder, dark mode toggles, and a
screenshot of its first screen (the whole page with ``LIVINGDICT_SCREENSHOTS=full``)
lands in ``_build/screenshots/`` (``dark/`` holds each lesson's first figure in dark
mode).
For every lesson page (``notebooks/...``): at least one rendered figure, its verdict
box, and Binder and Colab launch buttons whose URLs point at the repository of
``_config.yml``; every figure has a caption and alt text that says what it shows;
solutions start collapsed; each chapter has at least two exercises. Search finds a
lesson, and a chapter-3 page once one exists.

Both editions are tested: English at the site's root, Japanese under ``ja/``. Every
page has ``<html lang>`` right and a language switch to the same page in the other
edition. Every lesson, in both: figures numbered per chapter ("Fig. 3.4", "図 3.4")
and shown large enough that no text in them is below 10 px (the style's smallest
text, ``plot.MIN_POINTS``, at the figure's rendered scale); no code block scrolls
sideways at 1280 px, folded ones included; at least one code cell besides the
imports is shown unfolded (the mechanism); no verdict box shows a raw identifier.
In each Japanese lesson at least 90 % of the prose paragraphs hold Japanese text.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlparse

import bookconfig
import pytest

SKIP_DIRS = {
    "_static",
    "_sources",
    "_images",
    "_sphinx_design_static",
    "_panels_static",
}
WIDGET_REPR = re.compile(
    r"\b(?:Int|Float)(?:Range)?Slider\(|\binteractive\(children=|\b[HV]Box\(children=|"
    r"Loading widgets?\.\.\.|\bOutput\(\)"
)
GENERIC_ALT = re.compile(
    r"^(?:output|image|figure|plot|png|svg|graph|chart)[\s_.-]*\w*$", re.I
)
#: Full-page screenshots cost 40 % of a page's visit (a long lesson more); by default
#: each page's first screen is kept, ``LIVINGDICT_SCREENSHOTS=full`` keeps it all.
FULL = os.environ.get("LIVINGDICT_SCREENSHOTS") == "full"


def _pages() -> list[str]:
    """Every page of both editions (``ja/...``), static files and the
    redirecting ``index.html`` files aside."""
    root = bookconfig.built_html()
    if not root.is_dir():
        return []
    pages = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root)
        if SKIP_DIRS & set(rel.parts) or rel.name == "index.html":
            continue
        pages.append(rel.as_posix())
    return pages


PAGES = _pages()
pytestmark = pytest.mark.slow  # a browser on a built book
JA = "ja/"  # the Japanese edition's folder in the site
EN_PAGES = [p for p in PAGES if not p.startswith(JA)]
JA_PAGES = [p for p in PAGES if p.startswith(JA)]
LESSONS = [p for p in EN_PAGES if p.startswith("notebooks/")]
JA_LESSONS = [p for p in JA_PAGES if p.startswith(JA + "notebooks/")]
ALL_LESSONS = LESSONS + JA_LESSONS


def _group(page: str) -> str:
    """The xdist group of a page (``make browser`` runs two workers, each
    with its own browser): a lesson's chapter, so that a chapter's pages,
    both editions, are surveyed once, by one worker; else the page."""
    parts = page.removeprefix(JA).split("/")
    return parts[1] if parts[0] == "notebooks" else page


def by_page(pages: list[str]) -> list:
    """``pages`` as parameters, each in its page's group."""
    return [
        pytest.param(p, id=p, marks=pytest.mark.xdist_group(_group(p)))
        for p in pages
    ]


#: the smallest text a figure may hold, drawn at 100 dpi (livingdict.plot)
MIN_TEXT_PX = 10
FIGURE_TEXT_PX = 9 * 100 / 72  # plot.MIN_POINTS at the figure's own size
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
RAW_IDENTIFIER = re.compile(r"\b[a-z]+_[a-z0-9_]+\b|=\s*(?:==|<|>)")


def _shot_name(page: str) -> str:
    return page.removesuffix(".html").replace("/", "__") + ".png"  # ja__...


def new_context(browser, site: str, scheme: str = "light"):
    """A fresh browser context at the test's window size. Nothing leaves the
    local server: Chromium resolves no other host (conftest), and ``Tab``
    reports every request to another host as an error (the book is served
    whole, offline). No request is routed, so the browser's cache works."""
    return browser.new_context(
        viewport={"width": 1280, "height": 900}, color_scheme=scheme
    )


def _theme(page) -> str:
    return page.evaluate("document.documentElement.dataset.theme")


def _background_luminance(page) -> float:
    rgb = page.evaluate("getComputedStyle(document.body).backgroundColor")
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", rgb)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _toggle_to(page, mode: str) -> bool:
    button = page.locator(".theme-switch-button:visible").first
    for _ in range(4):
        if _theme(page) == mode:
            return True
        button.click()
    return _theme(page) == mode


FIGURES_JS = """(imgs) => imgs.map((i) => {
    const fig = i.closest('figure');
    const cap = fig ? fig.querySelector('figcaption') : null;
    const drawn = parseFloat(i.style.width) || parseFloat(i.getAttribute('width'))
                  || i.naturalWidth;
    return {alt: i.getAttribute('alt'), caption: cap ? cap.textContent.trim() : '',
            width: i.complete ? i.naturalWidth : 0,
            src: i.getAttribute('src') || '', ja: i.classList.contains('figure-ja'),
            scale: drawn ? i.getBoundingClientRect().width / drawn : 0};
})"""
#: every code block, folded ones opened, that is wider than its box
OVERFLOW_JS = """() => {
    document.querySelectorAll('article details').forEach((d) => { d.open = true; });
    return [...document.querySelectorAll('article div.highlight pre')]
        .filter((p) => p.scrollWidth > p.clientWidth + 1)
        .map((p) => p.textContent.split('\\n')
                     .reduce((a, b) => (b.length > a.length ? b : a), ''));
}"""
VISIBLE_CODE_JS = """() => [...document.querySelectorAll('article .cell .cell_input')]
    .filter((c) => c.checkVisibility() && c.getBoundingClientRect().height > 1)
    .length"""
PROSE_JS = """() => [...document.querySelectorAll('article p')]
    .filter((p) => !p.closest('.cell_input, .cell_output, pre, .citation, '
                              + '.bibliography, figure, .admonition.verdict'))
    .map((p) => p.innerText.trim())
    .filter((t) => t.replace(/[^A-Za-z\\u3040-\\u9fff]/g, '').length >= 20)"""
SOLUTIONS_JS = """(sols) => sols.map((s) => ({
    dropdown: s.classList.contains('dropdown'),
    open: [...s.children].some((c) => !c.classList.contains('admonition-title')
                                       && c.checkVisibility()
                                       && c.getBoundingClientRect().height > 1),
}))"""
MATHJAX_READY = """() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise.then(() => true) : true"""


@dataclass
class Report:
    """What one visit of a page saw (each page is loaded once, the tests read this)."""

    errors: list[str] = field(default_factory=list)
    has_main: bool = False
    widget_views: int = 0
    widget_texts: list[str] = field(default_factory=list)
    theme: str = ""
    dark_reached: bool = False
    light: float = 0.0
    dark: float = 0.0
    figures: list[dict] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    launch_visible: bool = False
    hrefs: list[str] = field(default_factory=list)
    exercises: int = 0
    solutions: list[dict] = field(default_factory=list)
    lang: str = ""
    switch: list[str] = field(default_factory=list)
    visible_code: int = 0
    overflowing: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)


class Tab:
    """One tab that visits every page: the resources are cached across
    visits, the reader's choices are not (storage is cleared before each
    page loads, so each visit is a first visit)."""

    def __init__(self, browser, site: str) -> None:
        self.raw: list[str] = []
        self.context = new_context(browser, site, "light")
        self.context.add_init_script(
            "try { localStorage.clear(); sessionStorage.clear(); } catch {}"
        )
        self.page = self.context.new_page()
        host, add = urlparse(site).netloc, self.raw.append
        self.page.on(
            "console",
            lambda m: m.type == "error" and add(f"console: {m.text}"),
        )
        self.page.on("pageerror", lambda exc: add(f"uncaught: {exc}"))
        self.page.on(
            "request",
            lambda r: (
                urlparse(r.url).netloc not in (host, "")
                and add(f"request to another host: {r.url}")
            ),
        )
        self.page.on(
            "response",
            lambda r: (
                r.status >= 400
                and urlparse(r.url).netloc == host
                and add(f"HTTP {r.status}: {r.url}")
            ),
        )

    def errors(self) -> list[str]:
        """What went wrong since the last call."""
        raw, self.raw[:] = list(self.raw), []
        return raw


def survey(tab: Tab, site: str, page: str, screenshots: Path) -> Report:
    """Visit ``page`` once: collect what the tests check, take its
    screenshots."""
    report, p = Report(), tab.page
    tab.errors()  # whatever the previous page left
    p.goto(site + page, wait_until="load")
    p.evaluate(MATHJAX_READY)
    report.has_main = p.locator("main#main-content").count() == 1
    report.widget_views = p.locator(
        'script[type="application/vnd.jupyter.widget-view+json"]'
    ).count()
    report.widget_texts = [
        t
        for t in p.locator(".cell_output").all_inner_texts()
        if WIDGET_REPR.search(t)
    ]
    report.figures = p.locator("article .cell_output img").evaluate_all(
        FIGURES_JS
    )
    verdicts = p.locator("article .admonition.verdict")
    report.verdicts = [
        verdicts.nth(i).inner_text()
        for i in range(verdicts.count())
        if verdicts.nth(i).is_visible()
    ]
    launch = p.locator(".dropdown-launch-buttons button")
    report.launch_visible = launch.count() > 0 and launch.first.is_visible()
    report.hrefs = p.locator(".dropdown-launch-buttons a").evaluate_all(
        "(as) => as.map((a) => a.href)"
    )
    report.exercises = p.locator("article .exercise").count()
    report.solutions = p.locator("article .solution").evaluate_all(
        SOLUTIONS_JS
    )
    report.lang = p.evaluate("document.documentElement.lang")
    report.switch = p.locator(".lang-switch-link").evaluate_all(
        "(as) => as.map((a) => a.href)"
    )
    report.visible_code = p.evaluate(VISIBLE_CODE_JS)
    report.prose = p.evaluate(PROSE_JS)
    p.screenshot(path=str(screenshots / _shot_name(page)), full_page=FULL)
    report.theme = _theme(p)
    report.light = _background_luminance(p)
    report.dark_reached = _toggle_to(p, "dark")
    report.dark = _background_luminance(p)
    first_figure = p.locator(
        "article .cell_output figure, article .cell_output img"
    ).first
    if page in LESSONS and first_figure.count():
        # the lesson's first figure in dark mode: is it still legible?
        shot = screenshots / "dark" / _shot_name(page)
        shot.parent.mkdir(exist_ok=True)
        first_figure.screenshot(path=str(shot))
    report.overflowing = p.evaluate(OVERFLOW_JS)  # opens folded cells
    report.errors = tab.errors()
    return report


@pytest.fixture(scope="session")
def reports(browser, site, screenshots):
    cache: dict[str, Report] = {}
    tab = Tab(browser, site)

    def get(page: str) -> Report:
        if page not in cache:
            cache[page] = survey(tab, site, page, screenshots)
        return cache[page]

    yield get
    tab.context.close()


def test_the_book_has_pages():
    assert PAGES, (
        f"no HTML pages under {bookconfig.built_html()}: build the book first"
    )
    assert LESSONS, "no lesson pages (notebooks/...) in the built book"


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_renders_cleanly(reports, page):
    r = reports(page)
    assert r.has_main, "no main content: the page did not render"
    assert not r.errors, "\n".join(r.errors)
    # widgets are dead in static HTML: the book shows a static figure instead
    assert r.widget_views == 0, "a widget view is embedded in the page"
    assert not r.widget_texts, (
        f"raw widget placeholder in an output: {r.widget_texts[0][:200]!r}"
    )
    # dark mode toggles, and the page really turns dark
    assert r.theme == "light" and r.dark_reached, (
        "the theme button does not reach dark mode"
    )
    assert r.dark < 0.25 < r.light, (
        f"background luminance light {r.light:.2f}, dark {r.dark:.2f}"
    )


@pytest.mark.parametrize("page", by_page(ALL_LESSONS))
def test_lesson_shows_figure_verdict_and_launch_buttons(reports, page):
    r = reports(page)
    assert len(r.figures) >= 1, (
        "a lesson shows at least one rendered figure (none at all? a kernel run with "
        "MPLBACKEND=Agg draws nothing, and jupyter-cache keeps that: rm -r _build/.jupyter_cache)"
    )
    widths = [f["width"] for f in r.figures]
    assert all(w > 0 for w in widths), (
        f"figures that did not load: widths {widths}"
    )
    title = "判定" if page.startswith(JA) else "Verdict"
    assert r.verdicts and title in r.verdicts[0], "no verdict box"
    assert r.launch_visible, "no launch button"
    docname = page.removeprefix(JA).removesuffix(".html")
    assert bookconfig.binder_url(docname) in r.hrefs, (
        f"Binder URL wrong or missing: {r.hrefs}"
    )
    assert bookconfig.colab_url(docname) in r.hrefs, (
        f"Colab URL wrong or missing: {r.hrefs}"
    )


@pytest.mark.parametrize("page", by_page(ALL_LESSONS))
def test_solutions_start_collapsed(reports, page):
    solutions = reports(page).solutions
    assert all(s["dropdown"] for s in solutions), (
        "give every solution `:class: dropdown`"
    )
    assert not any(s["open"] for s in solutions), (
        "a solution is shown open on the page"
    )


CHAPTERS = sorted({p.split("/")[1] for p in LESSONS})


@pytest.mark.parametrize(
    "chapter",
    [pytest.param(c, marks=pytest.mark.xdist_group(c)) for c in CHAPTERS],
)
def test_each_chapter_has_two_exercises(reports, chapter):
    counts = {
        p: reports(p).exercises for p in LESSONS if p.split("/")[1] == chapter
    }
    assert sum(counts.values()) >= 2, f"exercises per lesson: {counts}"


def _words(text: str) -> int:
    """Words in ``text``; Japanese has no spaces, so three CJK characters
    count as one word."""
    cjk = len(CJK.findall(text))
    return len(CJK.sub(" ", text).split()) + cjk // 3


def _alt_problem(alt: str | None) -> str | None:
    alt = (alt or "").strip()
    if not alt:
        return "no alt text"
    if "_images/" in alt or re.fullmatch(
        r"\S+\.(png|svg|jpe?g|gif)|[0-9a-f]{16,}", alt, re.I
    ):
        return f"alt text is a file name: {alt[:60]!r}"
    if (
        GENERIC_ALT.match(alt)
        or alt.startswith("<Figure size")
        or _words(alt) < 4
    ):
        return f"alt text does not say what the figure shows: {alt!r}"
    return None


@pytest.mark.parametrize("page", by_page(ALL_LESSONS))
def test_lesson_figures_have_caption_and_alt_text(reports, page):
    problems = []
    for n, fig in enumerate(reports(page).figures, 1):
        issue = _alt_problem(fig["alt"])
        if issue:
            problems.append(f"figure {n}: {issue}")
        if _words(fig["caption"]) < 3:
            problems.append(
                f"figure {n}: no caption (mystnb figure metadata, see README)"
            )
    assert not problems, "\n".join(problems)


def _counterpart(page: str) -> str:
    """The same page in the other edition."""
    return page.removeprefix(JA) if page.startswith(JA) else JA + page


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_language_and_switch(reports, site, page):
    r = reports(page)
    assert r.lang == ("ja" if page.startswith(JA) else "en"), r.lang
    if not JA_PAGES:
        pytest.skip("this build has no Japanese edition")
    assert len(r.switch) == 1, f"language switch links: {r.switch}"
    target = urlparse(r.switch[0]).path.lstrip("/")
    assert target == _counterpart(page), (
        f"the switch goes to {target}, not to the same page"
    )
    assert target in PAGES, f"the switch's target {target} does not exist"


@pytest.mark.parametrize("page", by_page(ALL_LESSONS))
def test_lesson_reads_well_on_the_page(reports, page):
    r = reports(page)
    # figures: numbered per chapter, text no smaller than MIN_TEXT_PX
    for n, fig in enumerate(r.figures, 1):
        assert re.match(r"^(?:Fig\.|図)\s*[0-9B]+\.\d+", fig["caption"]), (
            f"figure {n} is not numbered per chapter: {fig['caption'][:40]!r}"
        )
        smallest = FIGURE_TEXT_PX * fig["scale"]
        assert smallest >= MIN_TEXT_PX, (
            f"figure {n} is shrunk to {fig['scale']:.0%}: its smallest text "
            f"renders at {smallest:.1f} px (draw it plot.WIDTH wide)"
        )
    assert not r.overflowing, (
        f"a code block scrolls sideways: {r.overflowing[0][:90]!r}"
    )
    assert r.visible_code >= 2, (
        "show the lesson's mechanism: a code cell besides the imports unfolded"
    )
    for box in r.verdicts:
        raw = RAW_IDENTIFIER.search(box)
        assert raw is None, f"the verdict box shows {raw.group()!r}"


@pytest.mark.parametrize("page", by_page(JA_LESSONS))
def test_japanese_lesson_is_in_japanese(reports, page):
    prose = reports(page).prose
    english = [t for t in prose if not CJK.search(t)]
    assert prose and len(english) <= 0.1 * len(prose), (
        f"{len(english)} of {len(prose)} paragraphs have no Japanese: "
        f"{english[0][:80]!r}"
    )


@pytest.mark.parametrize("page", by_page(JA_LESSONS))
def test_japanese_figures_are_the_japanese_drawings(reports, page):
    """Every figure of a Japanese lesson is its Japanese drawing (class
    figure-ja, from book/_ext/ja_figures.py: the build has already refused
    a word without translation, an English word left or a figure grown past
    its canvas), not the English image."""
    ja = reports(page).figures
    en = {
        f["src"].rsplit("/", 1)[-1]
        for f in reports(_counterpart(page)).figures
    }
    english = [n for n, f in enumerate(ja, 1) if not f["ja"]]
    assert not english, f"figures {english} are drawn in English"
    same = [
        n for n, f in enumerate(ja, 1) if f["src"].rsplit("/", 1)[-1] in en
    ]
    assert not same, f"figures {same} are the English edition's images"


def test_japanese_text_has_a_japanese_font():
    import shutil
    import subprocess

    if not JA_PAGES:
        pytest.skip("this build has no Japanese edition")
    if shutil.which("fc-list") is None:
        pytest.skip("no fontconfig here")
    fonts = subprocess.run(
        ["fc-list", ":lang=ja", "family"], capture_output=True, text=True
    ).stdout
    assert fonts.strip(), "no Japanese font: apt-get install fonts-noto-cjk"


def _chapter3_page() -> str | None:
    landing = [p for p in EN_PAGES if re.match(r"book/ch3_", p)]
    lessons = [p for p in EN_PAGES if p.startswith("notebooks/03_")]
    return (landing or lessons or [None])[0]


def _search(p, site_page: str, term: str) -> list[str]:
    p.goto(site_page + "search.html?q=" + quote(term), wait_until="load")
    p.wait_for_function(  # the summary is filled in once every result is listed
        "(document.querySelector('#search-results p.search-summary') || {}).innerText",
        timeout=15_000,
    )
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


@pytest.mark.parametrize(
    "page",
    [LESSONS[0] if LESSONS else None, _chapter3_page()],
    ids=["a lesson", "a chapter-3 page"],
)
def test_search_finds(browser, site, page):
    if page is None:
        pytest.skip("no such page in this build yet")
    context = new_context(browser, site)
    try:
        p = context.new_page()
        term = _title_word(p, site, page)
        found = _search(p, site, term)
        assert page in found, (
            f"searching {term!r} did not find {page}: {found}"
        )
    finally:
        context.close()
