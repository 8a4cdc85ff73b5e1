"""setup()'s torch threads: the measured default, and the harness's override."""

import pytest
import torch

import livingdict


def test_default_threads(monkeypatch):
    monkeypatch.delenv("LIVINGDICT_TORCH_THREADS", raising=False)
    livingdict.setup(0)
    assert torch.get_num_threads() == livingdict.TORCH_THREADS == 1


def test_override_for_the_measurement(monkeypatch):
    monkeypatch.setenv("LIVINGDICT_TORCH_THREADS", "2")
    try:
        livingdict.setup(0)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(livingdict.TORCH_THREADS)


@pytest.mark.parametrize("bad", ["0", "two", "-1", "1.5"])
def test_bad_override(monkeypatch, bad):
    monkeypatch.setenv("LIVINGDICT_TORCH_THREADS", bad)
    with pytest.raises(ValueError, match="LIVINGDICT_TORCH_THREADS"):
        livingdict.torch_threads()
