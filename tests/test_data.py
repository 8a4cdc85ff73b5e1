"""Offline data: images, signals, tasks in the plane, pairs, sequences."""

import socket

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import data


def test_digits_are_scikit_learns_digits():
    from sklearn.datasets import load_digits

    ref = load_digits()
    s = data.digits(seed=0)
    x = torch.cat([s.x_train, s.x_test]).numpy()
    y = torch.cat([s.y_train, s.y_test]).numpy()
    assert x.shape == (1797, 64) and 0 <= x.min() and x.max() == 1
    # the same images and labels as load_digits, in some order
    order_ref = np.lexsort(np.c_[ref.data / 16, ref.target].T)
    order = np.lexsort(np.c_[x, y].T)
    np.testing.assert_array_equal(x[order], (ref.data / 16)[order_ref])
    np.testing.assert_array_equal(y[order], ref.target[order_ref])


def test_digits_split_follows_the_seed():
    a, b = data.digits(seed=0), data.digits(seed=1)
    assert len(a.y_test) == round(0.25 * 1797)
    assert torch.equal(data.digits(seed=0).y_test, a.y_test)
    assert not torch.equal(b.y_test, a.y_test)
    with pytest.raises(ValueError, match="test_fraction"):
        data.digits(test_fraction=1.5)


def test_mnist1d_is_generated_offline_and_leaves_numpy_state(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("mnist1d tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    np.random.seed(123)
    before = np.random.random()
    np.random.seed(123)
    s = data.mnist1d(num_samples=200, seed=3)
    assert np.random.random() == before
    assert s.x_train.shape == (160, 40) and s.x_test.shape == (40, 40)
    with pytest.raises(ValueError, match="10 samples"):
        data.mnist1d(num_samples=5)


def test_xor_labels_follow_the_signs():
    x, y = data.xor(400, seed=0)
    assert x.shape == (400, 2) and set(y.tolist()) == {0, 1}
    assert ((x[:, 0] * x[:, 1] < 0) == y.bool()).float().mean() > 0.95
    with pytest.raises(ValueError, match="noise"):
        data.xor(10, noise=-1)


def test_checkerboard_colours_and_no_line_beats_the_majority():
    x, y = data.checkerboard(3000, 3, seed=0)
    assert x.shape == (3000, 2) and x.abs().max() <= 1.5
    assert (y[(x.abs() < 0.5).all(1)] == 0).all()  # the centre cell
    assert (y[(x[:, 0].abs() < 0.5) & (x[:, 1] > 0.5)] == 1).all()
    # the best linear classifier (least squares on ±1 targets, then the best
    # threshold along its direction) does no better than the majority class
    a = torch.cat([x, torch.ones(len(x), 1)], 1)
    w = torch.linalg.lstsq(a, (2.0 * y - 1)[:, None]).solution[:, 0]
    s = a @ w
    best = max(
        ((s > t) == y.bool()).float().mean().item() for t in s.unique()[::7]
    )
    majority = max(y.float().mean().item(), 1 - y.float().mean().item())
    assert best < majority + 0.03
    with pytest.raises(ValueError, match="cells"):
        data.checkerboard(10, 1)


def test_same_class_pairs_are_balanced_and_labelled_right():
    x = torch.arange(30, dtype=torch.float32)[:, None].repeat(1, 2)
    y = torch.arange(30) % 3
    xp, same = data.same_class_pairs(x, y, 101, seed=1)
    assert xp.shape == (101, 4) and int(same.sum()) == 50
    a, b = xp[:, 0].long(), xp[:, 2].long()
    assert torch.equal(same, (y[a] == y[b]).long()) and not (a == b).any()
    assert torch.equal(data.same_class_pairs(x, y, 101, seed=1)[0], xp)
    with pytest.raises(ValueError, match=r"\(4, 2\).*\(3,\)"):
        data.same_class_pairs(torch.zeros(4, 2), torch.zeros(3).long(), 10)
    with pytest.raises(ValueError, match="counts"):
        data.same_class_pairs(torch.zeros(3, 2), torch.zeros(3).long(), 10)


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 20),
    n_pairs=st.integers(1, 6),
    extra=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    seed=st.integers(0, 10_000),
)
def test_recall_answer_is_the_token_after_the_name(
    batch, n_pairs, extra, seed
):
    nn, ne = n_pairs + extra[0], n_pairs + extra[1]
    gen = torch.Generator().manual_seed(seed)
    b = data.associative_recall(batch, n_pairs, nn, ne, generator=gen)
    t = b.tokens
    assert t.shape == (batch, 2 * n_pairs + 1) and b.length == t.shape[1]
    assert b.vocab == nn + ne and len(b) == batch
    names, entries = t[:, 0:-1:2], t[:, 1::2]
    assert (names < nn).all() and (entries >= nn).all()
    for row in range(batch):
        assert len(set(names[row].tolist())) == n_pairs
        assert len(set(entries[row].tolist())) == n_pairs
        i = names[row].tolist().index(t[row, -1].item())
        assert b.source[row] == 2 * i + 1
        assert b.targets[row] == t[row, 2 * i + 1]


def test_recall_follows_the_global_generator():
    torch.manual_seed(3)
    a = data.associative_recall(10, 3, 5)
    torch.manual_seed(3)
    assert torch.equal(data.associative_recall(10, 3, 5).tokens, a.tokens)


@pytest.mark.parametrize("offset", [0, 3, 6])
def test_copy_answer_sits_at_a_fixed_position(offset):
    gen = torch.Generator().manual_seed(0)
    b = data.copy_at_offset(50, 7, 5, offset, generator=gen)
    assert torch.equal(b.targets, b.tokens[:, 6 - offset])
    assert (b.source == 6 - offset).all()


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: data.associative_recall(0, 2, 4), "batch >= 1"),
        (lambda: data.associative_recall(5, 5, 4), "4 names"),
        (lambda: data.associative_recall(5, 3, 4, 2), "2 entries"),
        (lambda: data.copy_at_offset(5, 4, 3, 4), "0 <= offset"),
        (lambda: data.copy_at_offset(5, 4, 1, 0), "vocab >= 2"),
    ],
)
def test_sequence_tasks_reject_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_mnist1d_is_cached_and_the_cache_gives_the_same_numbers(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("LIVINGDICT_CACHE", str(tmp_path))
    first = data.mnist1d(num_samples=100, seed=5)
    (cached,) = tmp_path.glob("mnist1d-*-seed5-n100.npz")
    again = data.mnist1d(num_samples=100, seed=5)
    assert torch.equal(first.x_train, again.x_train)
    assert torch.equal(first.y_test, again.y_test)
    fresh = data._make_mnist1d(100, 5)
    np.testing.assert_array_equal(
        first.x_test.numpy(), fresh["x_test"].astype(np.float32)
    )
    cached.write_bytes(b"")  # the second call read the file
    with pytest.raises((ValueError, EOFError, OSError)):
        data.mnist1d(num_samples=100, seed=5)
