"""setup()'s torch threads: it pins them (whatever they were), and the
harness's override wins.

(The value itself, ``livingdict.TORCH_THREADS``, is a measured choice
documented beside it; a test asserting that constant could not fail.)
"""

import pytest
import torch

import livingdict


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_setup_pins_the_threads_whatever_they_were(
    monkeypatch, restore_threads
):
    monkeypatch.delenv("LIVINGDICT_TORCH_THREADS", raising=False)
    other = livingdict.TORCH_THREADS + 2
    torch.set_num_threads(other)
    livingdict.setup(0)
    assert torch.get_num_threads() == livingdict.TORCH_THREADS != other


def test_override_for_the_measurement(monkeypatch, restore_threads):
    wanted = livingdict.TORCH_THREADS + 1
    monkeypatch.setenv("LIVINGDICT_TORCH_THREADS", str(wanted))
    livingdict.setup(0)
    assert torch.get_num_threads() == wanted


@pytest.mark.parametrize("bad", ["0", "two", "-1", "1.5"])
def test_bad_override(monkeypatch, bad):
    monkeypatch.setenv("LIVINGDICT_TORCH_THREADS", bad)
    with pytest.raises(ValueError, match="LIVINGDICT_TORCH_THREADS"):
        livingdict.torch_threads()
