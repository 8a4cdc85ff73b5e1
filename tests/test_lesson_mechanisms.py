"""The mechanisms that live in their lessons, tested where they are defined:
``lesson_functions`` runs a lesson's imports and ``def``s, so a wrong
formula on the page fails here as well as in the lesson's check.

- 1.1: the loop of inner products and the correlations of a filter bank;
- 1.2: the structured matrices (blur, resize, the identity plus noise);
- 1.3: the matrix of condition number κ and the half-angle bound (it holds
  for every map and pair, and it is sharp); κ of a matrix;
- 1.5: the iterated kernel, and the fixed point of the step kernel k₀;
- 2.3: the key with its negative entries cut;
- 2.5: the hand-built dictionary (exact, one-hot keys);
- 2.6: the width for a parameter budget, the sawtooth built by hand and the
  bound on one hidden layer, the shell task;
- 3.5: lazy maps, Dobrushin's coefficient, layers to mix (a shift never
  mixes), the distance from the identity, the positions a map blends, the
  rank-one residual;
- 3.6: window masks and the receptive field ``1 + L(w − 1)``;
- 3.7: the model run from its embedded input, and the affine defect that is
  zero for fixed maps;
- 4.2: values fitted to the labels by least squares;
- 4.3: the drift of a weight matrix, snapshots and mixed reads;
- 4.4: a feed-forward layer's slots read as attention.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import metrics

F64 = torch.float64


@pytest.fixture(scope="module")
def lessons(lesson_functions):
    names = {
        "c11": "01_matrix_product/01_filter_bank",
        "c12": "01_matrix_product/02_random_weights",
        "c13": "01_matrix_product/03_similarity",
        "c16": "01_matrix_product/05_deep_kernel",
        "c23": "02_mlp/03_activation",
        "c25": "02_mlp/05_complete_dictionary",
        "c26": "02_mlp/06_depth",
        "c35": "03_attention/05_mixing",
        "c36": "03_attention/06_local_window",
        "c37": "03_attention/07_depth_composition",
        "c42": "04_living_dictionary/02_soft_trained",
        "c43": "04_living_dictionary/03_living",
        "c44": "04_living_dictionary/04_ffn_is_attention",
    }
    return {key: lesson_functions(name) for key, name in names.items()}


def random_map(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(n, n, generator=g, dtype=F64), -1)


# ---------------------------------------------------------- 1.1 filter bank
def test_responses_are_one_inner_product_per_column(lessons):
    c11 = lessons["c11"]
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(5, generator=g), torch.randn(5, 3, generator=g)
    torch.testing.assert_close(c11.responses(x, w), x @ w)
    w[:, 1] = 0  # a filter of zeros responds with 0, the others unchanged
    assert float(c11.responses(x, w)[1]) == 0.0


def test_correlations_are_pearson(lessons):
    c11 = lessons["c11"]
    g = torch.Generator().manual_seed(1)
    x, w = torch.randn(4, 9, generator=g), torch.randn(9, 6, generator=g)
    r = c11.correlations(x, w).numpy()
    ref = np.corrcoef(x.numpy(), w.T.numpy())[:4, 4:]
    np.testing.assert_allclose(r, ref, rtol=1e-5, atol=1e-6)
    # a correlation ignores scale and offset; a raw inner product does not
    r2 = c11.correlations(3 * x + 2, w).numpy()
    np.testing.assert_allclose(r2, r, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------- 1.2 random weights
def test_blur_resize_and_near_identity(lessons):
    c12 = lessons["c12"]
    assert torch.equal(c12.near_identity(5, 0.0), torch.eye(5, dtype=F64))
    b = c12.blur((8, 8), 1.0)
    assert b.shape == (64, 64) and (b >= 0).all()
    torch.testing.assert_close(b.sum(0), torch.ones(64, dtype=F64))
    assert int(b.argmax(0)[27]) == 27  # the strongest weight on itself
    k = c12.blur_1d(5, 2.0)  # a neighbour weighs exp(−1/2σ²) of the centre
    assert float(k[1, 2] / k[2, 2]) == pytest.approx(math.exp(-1 / 8))
    r = c12.resize((8, 8), (28, 28))
    assert r.shape == (64, 784) and (r >= 0).all()
    torch.testing.assert_close(r.sum(0), torch.ones(784, dtype=F64))
    flat = torch.full((1, 64), 0.5, dtype=F64)  # a flat image stays flat
    torch.testing.assert_close(flat @ r, torch.full((1, 784), 0.5, dtype=F64))
    assert (r > 0).sum(0).max() <= 4  # at most four input pixels
    same = c12.resize((3, 4), (3, 4))
    torch.testing.assert_close(same, torch.eye(12, dtype=F64))
    ramp = torch.arange(4, dtype=F64)[None]  # linear in, linear out
    up = ramp @ c12.resize_1d(4, 8)
    torch.testing.assert_close(
        up.diff()[0, 1:-1], torch.full((5,), 0.5, dtype=F64)
    )


# ------------------------------------------------------------ 1.3 similarity
@pytest.mark.parametrize("kappa", [1.0, 7.0, 1e3])
def test_conditioned_has_exact_condition_number(lessons, kappa):
    torch.manual_seed(1)
    w = lessons["c13"].conditioned(16, kappa)
    assert w.shape == (16, 16)
    assert np.linalg.cond(w.numpy()) == pytest.approx(kappa, rel=1e-9)


def test_cosine_bounds_known_values(lessons):
    bounds = lessons["c13"].cosine_bounds
    lo, hi = bounds(np.array([0.0, 1.0, -1.0]), 1.0)
    np.testing.assert_allclose(lo, [0, 1, -1], atol=1e-12)
    np.testing.assert_allclose(hi, [0, 1, -1], atol=1e-12)
    lo, hi = bounds(0.0, 3.0)  # θ = 90°, tan(θ/2) = 1
    assert hi == pytest.approx(math.cos(2 * math.atan(1 / 3)))
    assert lo == pytest.approx(math.cos(2 * math.atan(3)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(1.0, 1e4), st.integers(2, 6))
def test_condition_number_bounds_every_pair(lessons, seed, kappa, d):
    c13 = lessons["c13"]
    torch.manual_seed(seed)
    w = c13.conditioned(d, kappa)
    x = torch.randn(12, d, dtype=F64)
    iu = np.triu_indices(12, 1)
    c_in = metrics.pairwise_cosine(x)[iu]
    c_out = metrics.pairwise_cosine(x @ w)[iu]
    # angles from cosines lose precision next to 0 and π: skip those pairs
    keep = (np.abs(c_in) < 1 - 1e-8) & (np.abs(c_out) < 1 - 1e-8)
    dist = c13.half_angle_distortion(c_in[keep], c_out[keep])
    assert (dist <= math.log(kappa) + 1e-6).all()
    lo, hi = c13.cosine_bounds(c_in, kappa)
    assert (c_out >= lo - 1e-9).all() and (c_out <= hi + 1e-9).all()


def test_condition_number_bound_is_sharp(lessons):
    c13 = lessons["c13"]
    torch.manual_seed(0)
    kappa, theta = 50.0, 1.1
    u, _ = torch.linalg.qr(torch.randn(6, 6, dtype=F64))
    s = torch.tensor([1.0, 0.5, 0.3, 0.2, 0.1, 1 / kappa], dtype=F64)
    w = u * s @ torch.linalg.qr(torch.randn(6, 6, dtype=F64))[0].T
    # inputs symmetric about the most and the least stretched directions
    a, b = math.cos(theta / 2), math.sin(theta / 2)
    x = torch.stack([a * u[:, 0] + b * u[:, -1], a * u[:, 0] - b * u[:, -1]])
    c_in = float(metrics.cosine(x[0], x[1]))
    c_out = float(metrics.cosine((x @ w)[0], (x @ w)[1]))
    dist = c13.half_angle_distortion(c_in, c_out)
    assert dist == pytest.approx(math.log(kappa), rel=1e-9)
    hi = c13.cosine_bounds(c_in, kappa)[1]
    assert c_out == pytest.approx(hi, rel=1e-9)


def test_kappa_is_the_ratio_of_extreme_singular_values(lessons):
    c13 = lessons["c13"]
    d = torch.diag(torch.tensor([4.0, 2.0, 0.5], dtype=F64))
    assert c13.kappa(d) == pytest.approx(8.0)
    torch.manual_seed(2)
    w = c13.conditioned(10, 37.0)
    assert c13.kappa(w) == pytest.approx(37.0, rel=1e-9)


# ------------------------------------------------------------ 1.5 deep kernel
def test_step_kernel_has_an_attracting_fixed_point_below_one(lessons):
    c16 = lessons["c16"]
    k0 = c16.step_kernel
    c_star = c16.fixed_point(k0, 0.0, 0.99)
    # c* = 1 − arccos(c*)/π, about 0.79 (not 1: c = 1 repels)
    assert c_star == pytest.approx(1 - math.acos(c_star) / math.pi, abs=1e-12)
    assert 0.78 < c_star < 0.80
    for start in (-1.0, 0.0, 0.99, 0.999):
        end = float(c16.iterate_kernel(start, 200, kernel=k0)[-1])
        assert end == pytest.approx(c_star, abs=1e-9)
    # k₁ only climbs: from −1 every step goes up, towards 1
    c = c16.iterate_kernel(-1.0, 50)
    assert (np.diff(c) > 0).all() and 0.95 < c[-1] < 1


# ----------------------------------------------------------------- 2.6 depth
def test_n_params_counts_an_mlp(lessons):
    from livingdict.networks import mlp

    for sizes in ([5, 7, 7, 3], [40, 10], [1, 12, 12, 1]):
        net = mlp(sizes)
        count = sum(p.numel() for p in net.parameters())
        assert lessons["c26"].n_params(sizes) == count


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 80),
    st.integers(1, 20),
    st.integers(1, 5),
    st.integers(50, 20000),
)
def test_width_for_params_is_closest(lessons, d_in, d_out, layers, budget):
    c26 = lessons["c26"]
    w = c26.width_for_params(d_in, d_out, layers, budget)

    def gap(v):
        return abs(c26.n_params([d_in, *[v] * layers, d_out]) - budget)

    best = min(range(1, w + 3), key=gap)
    assert gap(w) == gap(best) and (gap(w) < gap(w - 1) or w == best)


# ------------------------------------------------------------ 2.3 activation
def test_cutting_negative_keys(lessons):
    from livingdict import networks

    keys_cut = lessons["c23"].keys_cut
    x = torch.randn(50, 2, generator=torch.Generator().manual_seed(0))
    relu = networks.Ensemble([2, 5, 2], members=2, activation="relu")
    with torch.no_grad():  # ReLU's key has no negative entry: nothing changes
        torch.testing.assert_close(keys_cut(relu, 1, x), relu.member(1)(x))
        tanh = networks.Ensemble([2, 5, 2], members=2, activation="tanh")
        first, _, second = tanh.member(0)
        key = torch.tanh(first(x))
        assert (key < 0).any()
        torch.testing.assert_close(
            keys_cut(tanh, 0, x), second(key.clamp(min=0))
        )


# ---------------------------------------------------- 2.5 complete dictionary
def test_exact_dictionary_returns_every_value(lessons):
    exact_dictionary = lessons["c25"].exact_dictionary
    g = torch.Generator().manual_seed(3)
    stored = torch.nn.functional.normalize(
        torch.randn(30, 8, generator=g, dtype=F64), dim=1
    )
    values = torch.randn(30, 4, generator=g, dtype=F64)
    net = exact_dictionary(stored, values)
    with torch.no_grad():
        torch.testing.assert_close(net(stored), values)
        keys = torch.relu(net[0](stored))
    torch.testing.assert_close(keys, torch.eye(30, dtype=F64))
    with pytest.raises(ValueError, match="own best match"):
        exact_dictionary(torch.cat([stored, stored[:1]]), values[:31])


# ---------------------------------------------------------------- 2.6 depth
@pytest.mark.parametrize("k", [1, 2, 5])
def test_deep_sawtooth_is_the_tent_map_composed(lessons, k):
    c26 = lessons["c26"]
    x = torch.rand(500, dtype=F64, generator=torch.Generator().manual_seed(k))
    with torch.no_grad():
        out = c26.deep_sawtooth(k)(x[:, None])[:, 0]
    torch.testing.assert_close(out, c26.sawtooth(x, k))
    assert c26.sawtooth(torch.tensor([0.5], dtype=F64), 1).item() == 1.0


def test_shallow_bound_and_fit(lessons):
    c26 = lessons["c26"]
    assert c26.shallow_bound(6, 0) == pytest.approx(math.sqrt(1 / 12))
    assert c26.shallow_bound(6, 32) == 0.0
    x = torch.linspace(0, 1, 2**9 + 1, dtype=F64)
    y = c26.sawtooth(x, 4)
    for n in (4, 8, 16):  # no fit may beat the bound
        with torch.no_grad():
            rmse = (c26.shallow_fit(x, y, n)(x[:, None])[:, 0] - y).pow(2)
        assert float(rmse.mean().sqrt()) >= c26.shallow_bound(4, n) - 1e-9


def test_shell_labels_the_middle_half(lessons):
    g = torch.Generator().manual_seed(0)
    x, y = lessons["c26"].shell(4000, 8, g)
    assert x.shape == (4000, 8) and set(y.tolist()) == {0, 1}
    assert float(y.float().mean()) == pytest.approx(0.5, abs=0.01)
    r2 = x.pow(2).sum(1)
    assert r2[y == 1].min() > r2[y == 0].min()
    assert r2[y == 1].max() < r2[y == 0].max()


# ---------------------------------------------------------------- 3.5 mixing
def test_mixing_extremes_and_submultiplicative(lessons):
    mixing = lessons["c35"].mixing
    assert mixing(torch.eye(5)) == 1.0
    assert mixing(torch.full((5, 5), 0.2)) == pytest.approx(0.0)
    assert mixing(torch.eye(2)[[0, 0]]) == 0.0  # both rows read input 0
    a, b = random_map(6, 1), random_map(6, 2)
    assert mixing(a @ b) <= mixing(a) * mixing(b) + 1e-12


def test_layers_to_mix_grows_as_lambda_approaches_one(lessons):
    c35 = lessons["c35"]
    a = random_map(8, 3)
    lams = (0.0, 0.5, 0.9, 0.99)
    counts = [c35.layers_to_mix(a, lam, 0.05) for lam in lams]
    assert counts == sorted(counts) and counts[-1] > 5 * counts[2]
    n = counts[1]  # δ(Mⁿ) < eps, and not one layer earlier
    m = c35.lazy(a, 0.5)
    assert c35.mixing(torch.linalg.matrix_power(m, n)) < 0.05
    assert c35.mixing(torch.linalg.matrix_power(m, n - 1)) >= 0.05
    torch.testing.assert_close(c35.lazy(a, 1.0), torch.eye(8, dtype=F64))


def test_a_shift_is_farthest_from_the_identity_and_never_mixes(lessons):
    c35 = lessons["c35"]
    shift = torch.eye(6, dtype=F64).roll(1, dims=1)
    assert c35.distance_from_identity(shift) == 1.0
    assert c35.distance_from_identity(torch.eye(6)) == 0.0
    assert c35.layers_to_mix(shift, 0.0, 0.05, cap=50) == math.inf
    a = random_map(6, 4)  # mixes, though closer to the identity
    assert c35.distance_from_identity(a) < 1.0
    assert c35.layers_to_mix(a, 0.0, 0.05, cap=50) < 50
    half = c35.lazy(a, 0.5)
    assert c35.distance_from_identity(half) == pytest.approx(
        0.5 * c35.distance_from_identity(a)
    )


def test_positions_blended_counts_the_positions_a_row_reads(lessons):
    blended = lessons["c35"].positions_blended
    uniform = torch.ones(5, 5, dtype=F64).tril()
    uniform = uniform / uniform.sum(-1, keepdim=True)  # row t reads t + 1
    assert blended(uniform) == pytest.approx(np.mean([2, 3, 4, 5]))
    assert blended(torch.eye(5)) == pytest.approx(1.0)
    previous = torch.eye(5).roll(1, dims=1).tril()  # row t reads t − 1
    previous[0, 0] = 1.0
    assert blended(previous) == pytest.approx(1.0)


def test_rank_one_residual(lessons):
    residual = lessons["c35"].rank_one_residual
    row = torch.randn(1, 6)
    assert residual(row.expand(5, 6)).item() == pytest.approx(0, abs=1e-6)
    x = torch.randn(3, 5, 6)
    r = residual(x)
    assert r.shape == (3,) and ((r > 0) & (r <= 1)).all()
    centred = x - x.mean(1, keepdim=True)
    assert residual(centred).allclose(torch.ones(3))


# ---------------------------------------------------------- 3.6 local window
@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(4, 40),
    window=st.integers(1, 6),
    layers=st.integers(1, 6),
)
def test_receptive_field_is_one_plus_layers_times_window_minus_one(
    lessons, length, window, layers
):
    c36 = lessons["c36"]
    mask = c36.window_mask(length, window)
    causal = c36.receptive_field([mask] * layers)
    reach = 1 + layers * (window - 1)
    expected = torch.clamp(torch.arange(1, length + 1), max=reach)
    assert torch.equal(causal, expected)
    w = 2 * (window // 2) + 1  # an odd window for the centred case
    centred = c36.window_mask(length, w, causal=False)
    field = c36.receptive_field([centred] * layers)
    assert field.max() == min(length, 1 + layers * (w - 1))


def test_window_mask_shapes(lessons):
    window_mask = lessons["c36"].window_mask
    m = window_mask(5, 2)
    assert m.dtype == torch.bool and m.sum() == 9 and (m.triu(1) == 0).all()
    assert torch.equal(window_mask(4, 1), torch.eye(4, dtype=torch.bool))
    ones = torch.ones(4, 4, dtype=torch.bool)
    assert torch.equal(window_mask(4, 4), ones.tril())
    assert torch.equal(window_mask(4, 3, causal=False), ones.tril(1).triu(-1))


# --------------------------------------------------------------- 3.7 depth
def test_after_embedding_is_the_model_and_fixed_maps_are_affine(lessons):
    from livingdict.networks import AttentionOnly

    c37 = lessons["c37"]
    torch.manual_seed(0)
    tokens = torch.randint(8, (16, 7))
    for content, residual in ((False, True), (False, False), (True, True)):
        model = AttentionOnly(
            8, 7, n_layers=2, content_maps=content, residual=residual
        )
        with torch.no_grad():
            x = model.embed(tokens) + model.pos
            torch.testing.assert_close(
                c37.after_embedding(model, x), model(tokens)
            )
        defect = c37.affine_defect(model, tokens)
        if content:
            assert defect > 1e-3  # maps from the input: not affine
        else:
            assert defect < 1e-5  # fixed maps: affine, with or without skip


# ---------------------------------------------------------------- 4.3 living
def test_drift_measures_relative_distance_from_the_start(lessons):
    w0 = torch.ones(2, 2)
    d = lessons["c43"].drift([w0, w0 * 1.5, w0 * 0 + 3, -w0])
    np.testing.assert_allclose(d, [0.0, 0.5, 2.0, 2.0])


def test_snapshot_and_mixed_read_the_mlp(lessons):
    c43 = lessons["c43"]
    torch.manual_seed(0)
    a, b = c43.mlp(6), c43.mlp(6)
    x = torch.randn(5, 64)
    with torch.no_grad():
        sa, sb = c43.snapshot(a), c43.snapshot(b)
        assert sa[0].shape == (64, 6) and sa[2].shape == (6, 10)
        torch.testing.assert_close(c43.mixed(sa, sa, x), a(x))
        # a's filters under b's values: b with its first layer put back to a's
        torch.testing.assert_close(c43.mixed(sa, sb, x), c43.reset(b, a, 0)(x))


# ---------------------------------------------------- 4.2 soft and hard keys
def test_fit_and_read_recovers_the_class_of_one_hot_slots(lessons):
    labels = torch.tensor([0, 1, 2, 1, 0, 2])
    keys = torch.eye(3)[labels]  # slot j is opened by the digits of class j
    read = lessons["c42"].fit_and_read(keys, labels, torch.eye(3))
    assert torch.equal(read, torch.arange(3))


# ------------------------------------------------ 4.4 an FFN is attention
def test_ffn_slots_read_as_attention(lessons):
    c44 = lessons["c44"]
    torch.manual_seed(0)
    ffn = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3)
    )
    x = torch.randn(4, 5)
    with torch.no_grad():
        filters, b1, values, b2 = c44.slots(ffn)
        assert filters.shape == (5, 7) and values.shape == (7, 3)
        torch.testing.assert_close(c44.attend(x, c44.slots(ffn)), ffn(x))
        soft = c44.attend(x, c44.slots(ffn), kernel="softmax")
        want = torch.softmax(x @ filters + b1, -1) @ values + b2
        torch.testing.assert_close(soft, want)
