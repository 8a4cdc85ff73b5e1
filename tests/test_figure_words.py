"""figure_words: a figure's words drawn in Japanese from the catalogs."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from IPython.core.pylabtools import print_figure  # noqa: E402

from livingdict import figure_words as fw  # noqa: E402


def _png(fig):
    return bytes(print_figure(fig, fmt="png"))


@pytest.fixture
def fig():
    f, (a, b) = plt.subplots(1, 2, figsize=(6.5, 3), layout="constrained")
    a.plot([0, 1], [0, 1], label="ReLU, width 32")
    a.set_title("ReLU leads by 12.3 points")
    a.set_xlabel("hidden units $N$")
    a.legend()
    b.bar([0, 1], [1, 2])
    b.set_xticks([0, 1], ["trained", "untrained"])
    f.suptitle("Training moves the filters")
    yield f
    plt.close(f)


JA = {
    "ReLU leads by {0} points": "ReLUが{0}ポイント上回る",
    "hidden units $N$": "隠れユニット数 $N$",
    "ReLU, width {0}": "ReLU、幅{0}",
    "trained": "学習後",
    "untrained": "学習前",
    "Training moves the filters": "学習はフィルターを動かす",
}


def test_numbers_become_placeholders_and_come_back():
    mid, numbers = fw.msgid("lead 12.3 points at width 32 (−0.5), MNIST-1D")
    assert mid == "lead {0} points at width {1} ({2}), MNIST-1D"
    assert numbers == ["12.3", "32", "−0.5"]
    assert fw.fill("幅{1}で{0}、{2}", numbers) == "幅32で12.3、−0.5"
    assert fw.msgid("$x_1 + 2$ and 3") == ("$x_1 + 2$ and {0}", ["3"])
    mid, numbers = fw.msgid("blur\nr = 0.99")
    assert mid == "blur\\nr = {0}"  # one line, as a catalog holds it
    assert fw.fill("ぼかし\\nr = {0}", numbers) == "ぼかし\nr = 0.99"


def test_a_translation_must_keep_every_placeholder():
    with pytest.raises(ValueError, match="placeholders"):
        fw.fill("幅", ["32"])
    with pytest.raises(ValueError, match="placeholders"):
        fw.fill("{0} {1}", ["32"])


def test_english_words_are_found_outside_math_and_names():
    assert fw.english("ReLU と tanh、$\\mathrm{softmax}$") == []
    assert fw.english("学習後 test accuracy") == ["test", "accuracy"]
    assert not fw.has_words("0.5") and not fw.has_words("$x$")
    assert fw.has_words("width")


def test_words_are_titles_labels_legends_and_word_ticks(fig):
    assert set(fw.words(fig)) == set(JA)


def test_the_japanese_drawing_swaps_every_word_and_restores_them(fig):
    before = [t.get_text() for t in fw.texts(fig)]
    png, report = fw.translated_png(fig, lambda m: JA.get(m, ""), _png)
    assert fw.png_size(png)[0] > 0
    assert report["missing"] == [] and report["english"] == []
    assert report["used"] == JA
    assert [t.get_text() for t in fw.texts(fig)] == before
    ticks = [t.get_text() for t in fig.axes[1].get_xticklabels()]
    assert ticks == ["trained", "untrained"]
    families = {
        f for t in fig.axes[1].get_xticklabels() for f in t.get_fontfamily()
    }
    assert fw.FONT not in families  # the English drawing keeps its font
    import matplotlib as mpl

    assert fw.FONT not in mpl.rcParams["font.family"]  # nor do later ones


def test_a_word_without_translation_is_reported_and_drawn_english(fig):
    partial = {k: v for k, v in JA.items() if k != "untrained"}
    _, report = fw.translated_png(fig, lambda m: partial.get(m, ""), _png)
    assert report["missing"] == ["untrained"]
    assert report["english"] == ["untrained"]


def test_a_changed_translation_makes_the_drawing_stale(fig):
    _, report = fw.translated_png(fig, lambda m: JA.get(m, ""), _png)
    assert fw.stale(report, JA) == []
    changed = {**JA, "trained": "訓練後"}
    assert fw.stale(report, changed) == ["trained"]


def test_the_folder_catalogs_are_one_union_the_first_name_wins(tmp_path):
    base = tmp_path / "locale" / "ja" / "LC_MESSAGES" / "notebooks" / "ch"
    base.mkdir(parents=True)
    entry = 'msgid "{0}"\nmsgstr "{1}"\n\n'
    (base / "01_a.po").write_text(
        entry.format("trained", "学習後") + entry.format("width", "幅"),
        encoding="utf-8",
    )
    (base / "02_b.po").write_text(
        entry.format("trained", "訓練後") + entry.format("depth", "深さ"),
        encoding="utf-8",
    )
    folder = tmp_path / "notebooks" / "ch"
    folder.mkdir(parents=True)
    assert fw.folder_messages(folder) == {
        "trained": "学習後",
        "width": "幅",
        "depth": "深さ",
    }
    assert fw.folder_messages(tmp_path / "elsewhere") == {}


def test_png_size_refuses_what_is_not_a_png():
    with pytest.raises(ValueError, match="not a PNG"):
        fw.png_size(b"GIF89a")


def test_an_executed_notebook_with_stale_figures_is_found(fig, tmp_path):
    _, report = fw.translated_png(fig, lambda m: JA.get(m, ""), _png)
    out = {"metadata": {"image/png": {"livingdict": report}}}
    nb = {"cells": [{"cell_type": "code", "outputs": [out]}]}
    base = tmp_path / "locale" / "ja" / "LC_MESSAGES" / "nb"
    base.mkdir(parents=True)
    (tmp_path / "nb").mkdir()
    po = "".join(f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in JA.items())
    (base / "a.po").write_text(po, encoding="utf-8")
    assert fw.stale_notebook(nb, tmp_path / "nb") == []
    (base / "a.po").write_text(po.replace("学習後", "訓練後"), "utf-8")
    assert fw.stale_notebook(nb, tmp_path / "nb") == ["trained"]
