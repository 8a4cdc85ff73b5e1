"""The explorables (``livingdict.explore``) in the built book, both editions.

Each lesson of :data:`LESSONS` holds one explorable: an HTML output whose data the
executed notebook exported, drawn and recomputed in the page by the shared module
``livingdict/static/explore.js``. For each explorable, in English and in Japanese:

* **the numbers, not the pixels**: for every check the lesson's run exported (the
  control values and what torch computed there), the test sets the controls as a reader
  would (value, then ``input``/``change`` events) and compares the numbers behind the
  drawing (``LDExplore.read(el)``) with torch's: numbers to
  ``ATOL + RTOL·|value|`` (the page computes in float64 from the exported float32 or
  float64 arrays, torch in float32 for most lessons). And the checks differ from each
  other by more than that tolerance, so a page that ignored its controls would fail;
* every control has a label, works from the keyboard (a slider moved with the arrow
  keys changes the numbers), the figure has alt text (``role="img"``, ``aria-label``)
  and a live summary; the labels are in the page's language (Japanese text in ``ja/``);
* the page carries only the explorable's data (at most :data:`MAX_DATA` bytes; the
  inlined module of the notebook output is dropped) and loads the shared module and
  MathJax from its own ``_static``, not from a CDN; no JavaScript error;
* without JavaScript the explorable is hidden and the static figures stay;
* a screenshot of each explorable at two control settings (its first and last check):
  ``_build/screenshots/explorables/<lesson>__<edition>__<n>.png``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import bookconfig
import pytest
from test_book_in_browser import Tab

pytestmark = pytest.mark.slow

#: the lessons that hold an explorable (issue 21), one per chapter
LESSONS = [
    "notebooks/01_matrix_product/01_filter_bank",
    "notebooks/02_mlp/02_mlp_as_lookup",
    "notebooks/03_attention/05_mixing",
    "notebooks/04_living_dictionary/01_hard_and_soft",
    "notebooks/05_beyond/01_hopfield",
]
EDITIONS = {"en": "", "ja": "ja/"}
ATOL, RTOL = 1e-4, 1e-4
MAX_DATA = 200_000
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")

SET_CONTROLS = """(el, controls) => {
    for (const [name, value] of Object.entries(controls)) {
        const input = el.querySelector(`[name="${name}"]`);
        if (!input) throw new Error(`no control ${name}`);
        if (input.type === 'checkbox') input.checked = Boolean(value);
        else input.value = String(value);
        input.dispatchEvent(new Event('input', {bubbles: true}));
        input.dispatchEvent(new Event('change', {bubbles: true}));
    }
    return JSON.parse(JSON.stringify(LDExplore.read(el)));
}"""
ACCESSIBILITY = """(el) => ({
    unlabelled: [...el.querySelectorAll('input, select')]
        .filter((i) => !(i.labels && i.labels.length) && !i.getAttribute('aria-label'))
        .map((i) => i.name),
    alt: (el.querySelector('[role="img"]') || {}).ariaLabel || '',
    live: (el.querySelector('[aria-live]') || {}).textContent || '',
    text: el.innerText,
    data: el.querySelector('script.ld-data').textContent.length,
})"""


def mismatches(got: object, want: object, path: str = "") -> list[str]:
    """Where ``got`` differs from ``want`` beyond the tolerance."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: got {got!r}"]
        out = []
        for key, value in want.items():
            out += mismatches(got.get(key), value, f"{path}.{key}")
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: got {got!r}, want {len(want)} values"]
        out = []
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            out += mismatches(g, w, f"{path}[{i}]")
        return out[:5]
    if isinstance(want, bool):  # integers (arg-max, wrong bits) differ by >= 1
        return [] if got == want else [f"{path}: got {got}, want {want}"]
    if not isinstance(got, int | float) or not math.isclose(
        got, want, rel_tol=RTOL, abs_tol=ATOL
    ):
        return [f"{path}: got {got}, torch {want}"]
    return []


def _decode(a: dict):
    import base64

    import numpy as np

    dtype = {"float32": "<f4", "float64": "<f8", "uint8": "u1"}[a["dtype"]]
    raw = np.frombuffer(base64.b64decode(a["b64"]), dtype)
    return raw.reshape(a["shape"]).astype(float) / a["scale"]


def _drawing_reads_the_filters(root) -> None:
    """Draw on the grid (toggle two pixels of the first digit): the page's
    responses are those of the drawn input, x W, computed here from the data."""
    import json

    data = json.loads(root.locator("script.ld-data").text_content())["data"]
    W, X = _decode(data["W"]), _decode(data["inputs"])
    one = data["scales"].index(1.0)
    root.evaluate(SET_CONTROLS, {"input": "0", "scale": str(one)})
    x = X[0].copy()
    for p in (0, 27):  # a corner, and a pixel near the middle
        root.locator(".ld-pixel").nth(p).click()
        x[p] = 0.0 if x[p] > 0 else 1.0
    got = root.evaluate("(el) => LDExplore.read(el)")
    assert root.locator('select[name="input"]').input_value() == str(len(X))
    want = (x @ W)[data["probes"]].tolist()
    assert not mismatches(got["raw_at"], want), (got["raw_at"], want)


def built(lesson: str, prefix: str) -> Path:
    return bookconfig.built_html() / f"{prefix}{lesson}.html"


CASES = [
    pytest.param(lesson, lang, id=f"{lang}-{lesson.rsplit('/', 1)[-1]}")
    for lesson in LESSONS
    for lang in EDITIONS
]


@pytest.fixture(scope="module")
def tab(browser, site):
    """One tab for every explorable's page (the cache kept, storage not)."""
    tab = Tab(browser, site)
    yield tab
    tab.context.close()


@pytest.mark.parametrize(("lesson", "lang"), CASES)
def test_explorable(tab, site, screenshots, lesson, lang):
    prefix = EDITIONS[lang]
    path = built(lesson, prefix)
    if not path.is_file():
        pytest.fail(f"no built page {path}")
    source = path.read_text(encoding="utf-8")
    assert 'class="ld-explorable' in source, f"{lesson}: no explorable"
    assert "data-ld-module" not in source, "the inlined module was not dropped"
    assert "cdn.jsdelivr.net" not in source, "MathJax still comes from a CDN"
    assert "_static/mathjax/tex-mml-chtml.js" in source
    page = tab.page
    tab.errors()  # whatever the previous page left
    page.goto(site + prefix + lesson + ".html", wait_until="load")
    roots = page.locator(".ld-explorable.ld-ready")
    roots.first.wait_for(state="visible", timeout=10_000)
    assert roots.count() >= 1
    folder = screenshots / "explorables"
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(roots.count()):
        root = roots.nth(r)
        info = root.evaluate(ACCESSIBILITY)
        assert not info["unlabelled"], f"controls without label: {info}"
        assert len(info["alt"]) > 40 and info["live"], info
        assert info["data"] <= MAX_DATA, f"{info['data']} bytes of data"
        if lang == "ja":
            assert CJK.search(info["alt"]) and CJK.search(info["live"])
        checks = root.evaluate("(el) => el.ldChecks")
        assert len(checks) >= 2
        for n, check in enumerate(checks):
            got = root.evaluate(SET_CONTROLS, check["controls"])
            bad = mismatches(got, check["expect"])
            assert not bad, f"check {n} {check['controls']}: {bad}"
            others = [c for c in checks if c is not check]
            assert all(mismatches(got, c["expect"]) for c in others), (
                f"check {n}: the numbers do not depend on the controls"
            )
            if n in (0, len(checks) - 1):  # the first and the last
                name = lesson.rsplit("/", 1)[-1]
                root.screenshot(
                    path=str(folder / f"{name}__{lang}__{min(n, 1)}.png")
                )
        if root.get_attribute("data-kind") == "filter_bank":
            _drawing_reads_the_filters(root)
        # the keyboard: from the first check's setting, the arrow key on the
        # first control (a slider, or a menu) moves it and the numbers
        root.evaluate(SET_CONTROLS, checks[0]["controls"])
        control = root.locator('input[type="range"], select').first
        before = root.evaluate("(el) => JSON.stringify(LDExplore.read(el))")
        value = control.input_value()
        control.focus()
        page.keyboard.press("ArrowRight")
        if control.input_value() == value:  # at the end of its range
            page.keyboard.press("ArrowLeft")
        after = root.evaluate("(el) => JSON.stringify(LDExplore.read(el))")
        assert control.input_value() != value and after != before
    assert not (errors := tab.errors()), errors


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda s: s.rsplit("/", 1)[-1])
def test_without_javascript_the_static_figure_stays(browser, site, lesson):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.route(
            "**/*",
            lambda r: (
                r.abort()
                if "127.0.0.1" not in r.request.url
                else r.continue_()
            ),
        )
        page.goto(site + lesson + ".html", wait_until="load")
        assert page.locator(".ld-explorable").count() >= 1
        assert not page.locator(".ld-explorable").first.is_visible()
        assert page.locator("article .cell_output img").count() >= 1
    finally:
        context.close()


def _standalone() -> list:
    """One small explorable of each kind, as a lesson's output would hold it."""
    import numpy as np
    import torch

    from livingdict import explore

    g = torch.Generator().manual_seed(0)
    pixels = torch.randint(0, 17, (40, 64), generator=g).float() / 16
    W, X = pixels[:30].T, pixels[30:]
    mlp = torch.nn.Sequential(
        torch.nn.Linear(64, 8), torch.nn.ReLU(), torch.nn.Linear(8, 10)
    )
    with torch.no_grad():
        out = mlp(X)
    q, k = torch.randn(2, 6, 4, generator=g, dtype=torch.float64)
    A = torch.nn.functional.normalize(torch.randn(10, 16, generator=g), dim=1)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        return [
            explore.filter_bank(
                W,
                X,
                list(range(10)),
                [j // 3 for j in range(30)],
                probes=(1, 7),
            ),
            explore.mlp_lookup(
                mlp[0].weight.T,
                mlp[0].bias,
                mlp[2].weight.T,
                mlp[2].bias,
                X,
                list(range(10)),
                out,
            ),
            explore.attention_mixing(q, k, layers=3),
            explore.hard_soft(
                A @ A.T, pixels[:10], list("abcdefghij"), [0.1, 1, 10]
            ),
            explore.hopfield(
                rng.choice([-1.0, 1.0], size=(1000, 100)), rng.permutation(100)
            ),
        ]


def test_the_notebook_output_works_alone(browser):
    """The output as JupyterLab, VS Code and Colab render it: no book around it, the
    module inlined in the output itself. Same checks, English labels."""
    explorables = _standalone()
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.set_content(
            "<!doctype html><meta charset=utf-8><body>"
            + "".join(e._repr_html_() for e in explorables)
        )
        roots = page.locator(".ld-explorable.ld-ready")
        assert roots.count() == len(explorables)
        for r, e in enumerate(explorables):
            for check in e.checks:
                got = roots.nth(r).evaluate(SET_CONTROLS, check["controls"])
                bad = mismatches(got, check["expect"])
                assert not bad, f"{e.kind} {check['controls']}: {bad}"
        assert not errors, errors
    finally:
        page.close()


LAB_CELL = """\
import torch
from livingdict import explore

g = torch.Generator().manual_seed(0)
A = torch.nn.functional.normalize(torch.randn(10, 16, generator=g), dim=1)
V = torch.rand(10, 64, generator=g)
explore.hard_soft(A @ A.T, V, list("abcdefghij"), [0.1, 1.0, 10.0])
"""


def test_in_a_real_jupyterlab(browser, tmp_path):
    """A notebook with an explorable, run in a real JupyterLab (headless, on this
    repository's kernel): the output draws, its controls recompute, no error."""
    import json
    import socket
    import subprocess
    import sys
    import time

    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(LAB_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(nb, tmp_path / "explorable.ipynb")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lab = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            "--ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={tmp_path}",
            "--LabApp.news_url=",
            "--LabServerApp.announcements_url=",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = None
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.5)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{base}/lab/tree/explorable.ipynb", timeout=120_000)
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
        # the kernel is up when the status bar says so
        page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(
            timeout=120_000
        )
        page.locator(".jp-Cell .jp-InputArea-editor").first.click()
        page.keyboard.press("Shift+Enter")
        root = page.locator(".jp-OutputArea .ld-explorable.ld-ready")
        root.wait_for(timeout=120_000)
        stderr = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        )
        assert stderr.count() == 0, stderr.all_inner_texts()
        checks = json.loads(
            page.locator(
                ".jp-OutputArea .ld-explorable script.ld-data"
            ).text_content()
        )["checks"]
        for check in checks:
            got = root.evaluate(SET_CONTROLS, check["controls"])
            bad = mismatches(got, check["expect"])
            assert not bad, f"{check['controls']}: {bad}"
        assert not errors, errors
    finally:
        if page is not None:
            page.close()
        lab.terminate()
        lab.wait(timeout=30)
