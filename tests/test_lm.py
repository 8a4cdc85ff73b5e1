"""The book's language model: its parts are the book's lookups, its analyses
compute what their docstrings say, and the committed checkpoint is the
output of ``lm_train`` (the first steps of training reproduce the log)."""

import hashlib
import time

import pytest
import torch
import torch.nn.functional as F

from livingdict import lm, lm_train
from livingdict.lookup import lookup

#: Every committed model's record: (which, seed).
RECORDS = [(w, s) for s in lm.TRAINING_SEEDS for w in lm.COMMITTED[s]]


def record_of(which, seed):
    n_layers, curriculum = lm.MODELS[which]
    return lm.training_log(n_layers, seed, curriculum)


@pytest.fixture(scope="module")
def model():
    return lm.load("main", seed=0)


@pytest.fixture(scope="module")
def windows():
    return lm.heldout_windows(8)


@pytest.fixture(scope="module")
def traced(model, windows):
    return lm.run(model, windows)


@pytest.mark.parametrize(("which", "seed"), RECORDS)
def test_provenance_first_steps_match_the_log(which, seed):
    """Training from each record's config reproduces its logged losses and
    its initial weights; the config is what ``make model`` trains."""
    record = record_of(which, seed)
    cfg = lm_train.TrainConfig.from_json(record["config"])
    assert cfg == lm_train.run_config(which, seed)
    start = time.perf_counter()
    _, init, log = lm_train.train(cfg, steps=3)
    assert time.perf_counter() - start < 30
    torch.testing.assert_close(
        torch.tensor(log["loss"]),
        torch.tensor(record["loss"][:3]),
        rtol=1e-4,
        atol=1e-4,
    )
    assert log["heldout"][0] == pytest.approx(record["heldout"][0], 1e-4)
    assert log["copying"][0] == pytest.approx(record["copying"][0], 1e-4)
    # the initial weights are the logged ones, and lm.initial_model
    # (what lm.load("init") returns) regenerates them
    assert lm.state_digest(init) == record["sha256"]["init"]
    regenerated = lm.initial_model(cfg.model, seed).state_dict()
    assert lm.state_digest(regenerated) == record["sha256"]["init"]


def test_init_is_the_main_models_start():
    init = lm.load("init", seed=1)
    assert (
        lm.state_digest(init.state_dict())
        == (record_of("main", 1)["sha256"]["init"])
    )


@pytest.mark.parametrize("seed", lm.TRAINING_SEEDS)
def test_committed_files_are_the_logged_ones(seed):
    """Each committed checkpoint is the file its run wrote (its SHA-256),
    and measures what its run reported (held-out loss, copying)."""
    assert set(lm.COMMITTED) == set(lm.TRAINING_SEEDS)
    for which in lm.COMMITTED[seed]:
        record = record_of(which, seed)
        n_layers, curriculum = lm.MODELS[which]
        path = lm.DATA / f"{lm.checkpoint_name(n_layers, seed, curriculum)}.pt"
        if which not in lm_train.COMMITTED_WEIGHTS:
            assert "weights" not in record["sha256"] and not path.exists()
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest == record["sha256"]["weights"], path.name
        m = lm.load(which, seed=seed)
        report = record["report"]
        loss = lm.mean_loss(m, lm.heldout_windows())
        assert loss == pytest.approx(report["heldout_loss"], rel=1e-4)
        first, second = lm.copying_losses(m, lm.repeated_random())
        assert first == pytest.approx(report["first_repeat_loss"], rel=1e-4)
        assert second == pytest.approx(report["second_repeat_loss"], rel=1e-4)


def test_pack_rounds_each_row_to_int8():
    state = {
        "w": torch.randn(5, 7),
        "b": torch.randn(7),
        "z": torch.zeros(2, 3),
    }
    packed = lm.pack(state)
    assert packed["w"].dtype == torch.int8 and packed["b"].dtype == torch.half
    out = lm.unpack(packed)
    assert set(out) == set(state)
    step = state["w"].abs().amax(1, keepdim=True) / 127
    assert ((out["w"] - state["w"]).abs() <= step * 0.51).all()
    torch.testing.assert_close(out["z"], state["z"])


def test_training_seed_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("LIVINGDICT_TRAINING_SEED", "2")
    assert lm.training_seed() == 2
    assert lm.training_log()["config"]["seed"] == 2
    monkeypatch.setenv("LIVINGDICT_TRAINING_SEED", "7")
    with pytest.raises(ValueError, match="TRAINING_SEED"):
        lm.training_seed()
    monkeypatch.delenv("LIVINGDICT_TRAINING_SEED")
    assert lm.training_seed() == 0


def test_ffn_is_a_lookup_of_its_dictionary(model):
    block = model.blocks[0]
    x = torch.randn(3, 5, model.cfg.d_model)
    ffn = block.ffn
    w1, b1 = block.mlp[0].weight.T, block.mlp[0].bias
    w2, b2 = block.mlp[2].weight.T, block.mlp[2].bias
    assert w1.shape == (model.cfg.d_model, model.cfg.d_ffn)
    torch.testing.assert_close(ffn.filters, w1)
    torch.testing.assert_close(ffn.values, w2)
    h = torch.relu(x @ w1 + b1)
    torch.testing.assert_close(ffn.keys(x), h)
    torch.testing.assert_close(ffn.read(x), lookup(h, w2) + b2)
    torch.testing.assert_close(ffn.read(x), block.mlp(x))


def test_trace_is_the_forward_pass(model, windows, traced):
    logits, tr = traced
    n = model.cfg.n_layers
    assert all(len(v) == n for v in vars(tr).values())
    for l, block in enumerate(model.blocks):
        torch.testing.assert_close(tr.mid[l], tr.pre[l] + tr.attn_out[l])
        torch.testing.assert_close(tr.post[l], tr.mid[l] + tr.ffn_out[l])
        h = block.ffn.keys(block.ln2(tr.mid[l]))
        torch.testing.assert_close(tr.keys[l], h)
        if l + 1 < n:
            torch.testing.assert_close(tr.pre[l + 1], tr.post[l])
    expect = model.unembed(model.ln_f(tr.post[-1]))
    torch.testing.assert_close(logits, expect)
    torch.testing.assert_close(logits, model(windows))


def test_attention_maps_are_row_stochastic_and_causal(traced):
    _, tr = traced
    for key in tr.maps:
        t = key.shape[-1]
        torch.testing.assert_close(key.sum(-1), torch.ones(key.shape[:-1]))
        assert (key >= 0).all()
        future = ~torch.ones(t, t, dtype=torch.bool).tril()
        assert (key[..., future] == 0).all()


def test_attention_heads_match_torch_sdpa(model):
    attn = model.blocks[1].attn
    x = torch.randn(2, 7, model.cfg.d_model)
    out, _ = attn(x)
    b, t, d = x.shape
    q, k, v = (
        w(x).view(b, t, attn.n_heads, -1).transpose(1, 2)
        for w in (attn.wq, attn.wk, attn.wv)
    )
    z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(
        out, attn.wo(z.transpose(1, 2).reshape(b, t, d))
    )


def test_ablation_zeroes_a_head_and_no_residual_drops_the_stream(model):
    x = lm.heldout_windows(2)
    with torch.no_grad():
        _, tr = model(x, trace=True, ablate=[(0, 1)])
        attn = model.blocks[0].attn
        z_all, _ = attn(model.blocks[0].ln1(tr.pre[0]), [0, 1, 2, 3])
        assert torch.count_nonzero(z_all) == 0
        _, full = model(x, trace=True)
        assert not torch.allclose(tr.attn_out[0], full.attn_out[0])
        torch.testing.assert_close(tr.pre[0], full.pre[0])
        _, nores = model(x, trace=True, attn_residual=[False, True])
        torch.testing.assert_close(nores.mid[0], nores.attn_out[0])
        torch.testing.assert_close(
            nores.mid[1], nores.pre[1] + nores.attn_out[1]
        )


def test_bad_input_raises_naming_shapes(model):
    long = torch.zeros(1, model.cfg.context + 1, dtype=torch.long)
    with pytest.raises(ValueError, match=r"\(1, 129\)"):
        model(long)
    with pytest.raises(ValueError, match=r"\(5,\)"):
        model(torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="outside"):
        model(torch.full((1, 3), lm.VOCAB_SIZE))
    with pytest.raises(ValueError, match="ablate"):
        model(long[:, :4], ablate=[(0, 9)])
    with pytest.raises(ValueError, match=r"\(2, 5, 3\)"):
        lm.trigger_contexts(torch.zeros(2, 5, 3), torch.zeros(2, 4), 0)
    with pytest.raises(ValueError, match="heads"):
        lm.Attention(10, 3)
    with pytest.raises(ValueError, match="groups"):
        lm.reset(model, model, ["filters"])


def test_tokenizer_round_trip_and_vocabulary():
    tok = lm.tokenizer()
    assert len(tok) == lm.VOCAB_SIZE
    assert len(set(tok.vocab)) == len(tok)
    text = "Return the number of items in a list.\n    >>> len([1, 2])\n"
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert len(ids) < len(text) / 2  # word pieces, not characters
    assert " the" in tok.vocab and " function" in tok.vocab


def test_tokenizer_merges_the_lowest_rank_pair_first_leftmost_of_equals():
    tok = lm.Tokenizer(["a", "b", "c"], [("b", "c"), ("a", "b"), ("a", "a")])
    pieces = [[tok.vocab[i] for i in tok.encode(w)] for w in ("abc", "aaa")]
    # "bc" (rank 0) wins over "ab" (rank 1); of the two "aa", the first
    assert pieces == [["a", "bc"], ["aa", "a"]]
    assert tok.encode("aaaa") == [tok.index["aa"]] * 2
    with pytest.raises(ValueError, match="not in vocab"):
        tok.encode("abd")


def test_train_bpe_is_deterministic_and_merges_the_most_frequent_pair():
    text = "low lower lowest low low newer newest"
    a, b = lm_train.train_bpe(text, 20), lm_train.train_bpe(text, 20)
    assert a == b
    # "lo" and "ow" occur 5 times each (in every word but the n...s); the
    # tie goes to the larger pair
    assert a["merges"][:2] == [["o", "w"], ["l", "ow"]]
    tok = lm.Tokenizer(a["alphabet"], a["merges"])
    assert tok.decode(tok.encode(text)) == text
    with pytest.raises(ValueError, match="alphabet"):
        lm_train.train_bpe("abc", 2)


def test_corpus_split_and_windows_are_fixed():
    docs = lm.documents()
    train, heldout = lm.split_text(docs)
    assert len(train) + len(heldout) > 1_000_000
    assert 0.05 < len(heldout) / (len(train) + len(heldout)) < 0.15
    w = lm.heldout_windows()
    assert w.shape == (64, lm.LMConfig().context)
    assert torch.equal(w, lm.heldout_windows())


def test_model_beats_the_baselines(model):
    base = lm.baseline_losses()
    assert base["bigram"] < base["unigram"]
    assert lm.mean_loss(model, lm.heldout_windows()) < base["bigram"]


def test_head_scores_and_copying(model):
    seqs = lm.repeated_random(8, 20)
    assert seqs.shape == (8, 40)
    assert torch.equal(seqs[:, :20], seqs[:, 20:])
    scores = lm.head_scores(model, seqs)
    shape = (model.cfg.n_layers, model.cfg.n_heads)
    assert scores.induction.shape == shape == scores.previous_token.shape
    assert ((scores.induction >= 0) & (scores.induction <= 1)).all()
    # the formula, for one head, by hand
    _, tr = lm.run(model, seqs)
    key = tr.maps[1][:, 2]
    t = torch.arange(20, 40)
    assert scores.induction[1, 2] == pytest.approx(
        key[:, t, t - 19].mean().item(), rel=1e-5
    )
    # the logged report is what the committed checkpoint measures
    report = lm.training_log(2, 0)["report"]
    full = lm.head_scores(model, lm.repeated_random())
    assert full.induction.max() == pytest.approx(
        report["induction_score"], rel=1e-4
    )


def test_value_logits_read_values_through_final_norm(model):
    logits = lm.value_logits(model, 1)
    v = model.blocks[1].ffn.values[7]
    ln = model.ln_f
    normed = (v - v.mean()) / torch.sqrt(v.var(unbiased=False) + ln.eps)
    expect = (normed * ln.weight) @ model.unembed.weight.T
    torch.testing.assert_close(logits[7], expect.detach())
    tokens = lm.promoted_tokens(model, 1, 7, k=3)
    top = torch.topk(expect, 3).indices.tolist()
    assert tokens == [lm.tokenizer().vocab[i] for i in top]


def test_trigger_contexts_are_the_top_key_entries(windows, traced):
    _, tr = traced
    keys = tr.keys[0]
    found = lm.trigger_contexts(keys, windows, unit=5, k=3)
    acts = [t.activation for t in found]
    assert acts == sorted(acts, reverse=True)
    assert acts[0] == pytest.approx(keys[:, :-1, 5].max().item())
    t = found[0]
    tok = lm.tokenizer()
    assert t.token == tok.decode(
        windows[t.window, t.position : t.position + 1]
    )
    assert f"⟦{t.token}⟧" in t.text


def test_effective_numbers_lie_in_range(model, traced):
    _, tr = traced
    for units in lm.effective_units(tr):
        assert (units >= 1 - 1e-9).all() and (units <= model.cfg.d_ffn).all()
    for pos in lm.effective_positions(tr):
        assert pos.shape[0] == model.cfg.n_heads
        assert (pos >= 1 - 1e-9).all() and (pos <= model.cfg.context).all()


def test_reset_puts_back_only_the_named_groups(model):
    init = lm.load("init", seed=0)
    out = lm.reset(model, init, ["ffn_filters", "attn_values"], layers=[1])
    s, m, i = out.state_dict(), model.state_dict(), init.state_dict()
    for k in s:
        back = k.startswith("blocks.1.") and k.endswith(
            lm.GROUPS["ffn_filters"] + lm.GROUPS["attn_values"]
        )
        assert torch.equal(s[k], i[k] if back else m[k]), k


def test_samples_are_deterministic(model):
    a = lm.generate(model, "Return the", n_tokens=8, seed=3)
    assert a == lm.generate(model, "Return the", n_tokens=8, seed=3)
    assert a.startswith("Return the") and len(a) > len("Return the")
