"""ropesim.train (issue 37: RoPE-X's controlled experiment by training; docs/TRAINED.md).

One tiny model is trained on MOD_3 (|w| ≡ 0 mod 3) and tested; its exported spec is read back
(bit-identical parameters), run exactly by ropesim at fp32, and every figure of train_one's
result is recomputed from that file with membership judged by Python (len(w) % 3 == 0), not by
ropesim's sampler. ropesim.balanced_words is checked against membership computed by hand.
"""
import json
import math

import pytest

torch = pytest.importorskip("torch")
import ropesim  # noqa: E402
import ropesim.torch as rt  # noqa: E402
import ropesim.train as tr  # noqa: E402
from ropesim import _ropesim  # noqa: E402

TINY = tr.TrainConfig(layers=1, d_model=8, heads=1, head_dim=4, ffn_hidden=8, steps=150,
                      batch=32, lr=1e-2, train_length=12, train_words=6, test_length=60,
                      test_stride=5, test_words=3, exact_every=2, exact_words=2,
                      formats=("bf16", "fp32"))


def test_balanced_words_by_hand():
    rows = ropesim.balanced_words([1, 2, 3, 4, 9], formula="mod(3,1)", alphabet="ab", words=5)
    for row in rows:
        n = row["length"]
        assert all(len(w) == n for w in row["members"] + row["nonmembers"])
        assert (row["members"] != []) == (n % 3 == 0)   # every word of length 3k is a member
        assert (row["nonmembers"] != []) == (n % 3 != 0)
    assert rows[0]["nonmembers"] == ["a", "b"] and rows[0]["nonmembers_exhaustive"]
    parity = ropesim.balanced_words([2, 11], regex="a*(ba*ba*)*", words=4, seed=3)
    assert parity[0]["members"] == ["aa", "bb"] and parity[0]["nonmembers"] == ["ab", "ba"]
    assert all(w.count("b") % 2 == 0 for w in parity[1]["members"])
    assert all(w.count("b") % 2 == 1 for w in parity[1]["nonmembers"])
    # the words experiment_length tries are these words (the same draw)
    drawn = ropesim.balanced_words([8], formula="P b", words=3, seed=5)[0]
    assert len(set(drawn["members"])) >= 2 and all("b" in w for w in drawn["members"])
    with pytest.raises(ValueError):
        ropesim.balanced_words([1], formula="P a", regex="a*")
    with pytest.raises(ValueError):
        ropesim.balanced_words([3, 2], formula="P a")
    with pytest.raises(TypeError):
        ropesim.balanced_words([1.5], formula="P a")


def test_train_one_tiny_model_and_its_export(tmp_path):
    torch.set_num_threads(1)
    spec_path = tmp_path / "mod3.json"
    result = tr.train_one("MOD_3", "periodic", 0, TINY, spec_path=str(spec_path))
    assert result["rope"] == ["periodic:m=2,3", "r1"]
    assert result["loss"][1] < result["loss"][0]
    # The export round trip: bit-identical parameters.
    model = rt.from_model_spec(spec_path)
    again = tmp_path / "again.json"
    model.to_model_spec(again)
    assert json.loads(again.read_text()) == json.loads(spec_path.read_text())
    for p, q in zip(model.parameters(), rt.from_model_spec(again).parameters()):
        assert torch.equal(p, q)
    # Recompute every reported figure from the file, membership by len(w) % 3 == 0.
    words = {}
    for row in ropesim.balanced_words(TINY.test_lengths(), formula="mod(3,1)",
                                      words=TINY.test_words, seed=TINY.test_seed):
        words[row["length"]] = row["members"] + row["nonmembers"]
    y, r = model.logits_with_bound([w for n in TINY.test_lengths() for w in words[n]])
    twin = dict(zip([w for n in TINY.test_lengths() for w in words[n]], y.tolist()))
    radius = dict(zip(twin, r.tolist()))
    fp32 = _ropesim.parse_model(spec_path.read_text(), format="fp32")
    decided_outside = 0
    for row in result["evaluations"]["twin"]["rows"]:
        n = row["length"]
        right = [(twin[w] > 0) == (len(w) % 3 == 0) for w in words[n]]
        assert row["balanced_accuracy"] == sum(right) / len(right)  # one side per length
    for row in result["evaluations"]["fp32"]["rows"]:
        n = row["length"]
        sample = words[n][:TINY.exact_words]
        exact = [bool(_ropesim.run_model(fp32, w, False)["accept"]) for w in sample]
        assert row["balanced_accuracy"] == sum(
            e == (len(w) % 3 == 0) for e, w in zip(exact, sample)) / len(sample)
        for e, w in zip(exact, sample):
            if abs(twin[w]) > 2 * radius[w]:  # outside the bound: the same decision
                decided_outside += 1
                assert e == (twin[w] > 0), w
    assert decided_outside >= len(result["evaluations"]["fp32"]["rows"])
    for fmt in TINY.formats:  # each format's own exact output, and the twin's decision
        last = result["evaluations"][fmt]["last_word"]
        assert len(last["word"]) == TINY.test_length
        parsed = _ropesim.parse_model(spec_path.read_text(), format=fmt)
        assert last["output"] == _ropesim.run_model(parsed, last["word"], False)["output"]
        if fmt == "fp32":
            assert abs(last["output"] - twin[last["word"]]) <= 2 * radius[last["word"]]
    assert result["evaluations"]["bf16"]["last_word"]["output"] != \
        result["evaluations"]["fp32"]["last_word"]["output"]
    lengths = [x["length"] for x in result["evaluations"]["fp32"]["rows"]]
    assert lengths == TINY.exact_lengths() and lengths[-1] == TINY.test_length
    mean = sum(x["balanced_accuracy"] for x in result["evaluations"]["fp32"]["rows"]) / len(lengths)
    assert math.isclose(result["evaluations"]["fp32"]["mean_accuracy"], mean)


def test_command_line_refuses_bad_arguments(tmp_path, capsys):
    for argv in (["--out", str(tmp_path), "--languages", "bogus"],
                 ["--out", str(tmp_path), "--schedules", "nope,sideways"],
                 ["--out", str(tmp_path), "--seeds", "x"],
                 ["--out", str(tmp_path), "--jobs", "0"],
                 ["--languages", "MOD_3"]):
        assert tr.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("ropesim.train: ") and err.count("\n") == 1, err
    with pytest.raises(ValueError):
        tr.train_one("MOD_3", "periodic", 0, tr.TrainConfig(test_length=10))


def test_command_line_errors_are_one_line_naming_the_bad_value(tmp_path, capsys):
    for argv, expected in (
            (["--out", str(tmp_path), "--seeds", "0,0"], "--seeds: 0 given twice"),
            (["--out", "/dev/full"], "--out: '/dev/full' is not a directory"),
            (["--out", str(tmp_path), "--steps", "abc"], "--steps: 'abc' is not an integer"),
            (["--out", str(tmp_path), "--seeds", "1,x"], "--seeds: 'x' is not an integer")):
        assert tr.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("ropesim.train: " + expected) and err.count("\n") == 1, err
        if "--steps" in argv or "x" in argv[-1]:  # only the bad value, not the defaults
            assert "'0,1,2'" not in err and "'1'" not in err, err


def test_command_line_keeps_a_schedule_spec_whole(tmp_path, capsys):
    # split by hand: a new spec starts at a ':' or a bare name, 'dim=8' and '3' continue one
    assert _ropesim.split_schedules("nope,conventional:base=10000,dim=8;periodic:m=2,3",
                                    "--schedules") == ["nope", "conventional:base=10000,dim=8",
                                                       "periodic:m=2,3"]
    # the schedules are accepted: the one error left is the --jobs after them
    assert tr.main(["--out", str(tmp_path), "--schedules", "conventional:base=10000,dim=8",
                    "--jobs", "0"]) == 2
    assert capsys.readouterr().err == "ropesim.train: --jobs: expected an int >= 1, got 0\n"


def test_command_line_write_failure_names_the_file(tmp_path, capsys, monkeypatch):
    def full(*args):
        raise OSError(28, "No space left on device", str(tmp_path / "table.md"))
    monkeypatch.setattr(tr, "_run", full)
    assert tr.main(["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"ropesim.train: --out: cannot write {str(tmp_path / 'table.md')!r}: "
                   "No space left on device\n")
