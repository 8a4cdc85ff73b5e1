"""prototypes: a hard, k-means dictionary read with one-hot keys; bad input."""

import pytest
import torch

from livingdict.lookup import lookup
from livingdict.prototypes import (
    fit_prototypes,
    kmeans,
    nearest_keys,
    predict,
)


def blobs(seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = torch.tensor([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    y = torch.arange(3).repeat_interleave(40)
    return centers[y] + 0.3 * torch.randn(120, 2, generator=g), y


def test_prototypes_of_separated_blobs_classify_perfectly():
    x, y = blobs()
    for per_class in (False, True):
        p = fit_prototypes(x, y, 3, per_class=per_class)
        assert (predict(p, x) == y).all()


def test_keys_are_one_hot_and_read_a_label():
    x, y = blobs(1)
    p = fit_prototypes(x, y, 6, per_class=True)
    keys = nearest_keys(p, x)
    assert keys.shape == (120, 6) and torch.equal(keys.sum(1), torch.ones(120))
    assert torch.equal(lookup(keys, p.values).argmax(1), predict(p, x))
    assert p.values.shape == (6, 3)


@pytest.mark.parametrize(
    "call",
    [
        lambda x, y: fit_prototypes(x, y[:-1], 3),
        lambda x, y: fit_prototypes(x[:, 0], y, 3),
        lambda x, y: fit_prototypes(x, y, 0),
        lambda x, y: fit_prototypes(x, y, 500),
        lambda x, y: fit_prototypes(x, y, 4, per_class=True),
        lambda x, y: nearest_keys(fit_prototypes(x, y, 3), torch.ones(5, 3)),
    ],
)
def test_bad_input_raises(call):
    x, y = blobs()
    with pytest.raises(ValueError):
        call(x, y)


def test_error_names_the_shapes():
    x, y = blobs()
    with pytest.raises(ValueError, match=r"\(5, 3\).*\(3, 2\)"):
        nearest_keys(fit_prototypes(x, y, 3), torch.ones(5, 3))


def test_kmeans_finds_separated_blobs_and_is_deterministic():
    x, y = blobs(2)
    centers, assign = kmeans(x, 3, seed=5)
    # every blob is one cluster, and each centre sits at its blob's mean
    for c in range(3):
        assert len(torch.unique(assign[y == c])) == 1
    means = torch.stack([x[y == c].mean(0) for c in range(3)])
    dist = torch.cdist(means, centers).min(1).values
    assert dist.max() < 1e-4
    again, _ = kmeans(x, 3, seed=5)
    assert torch.equal(centers, again)


def test_kmeans_keeps_the_restart_with_least_inertia():
    x, _ = blobs(3)
    one, a1 = kmeans(x, 6, restarts=1, seed=0)
    many, a5 = kmeans(x, 6, restarts=8, seed=0)

    def inertia(c, a):
        return ((x - c[a]) ** 2).sum()

    assert inertia(many, a5) <= inertia(one, a1)
