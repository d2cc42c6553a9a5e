"""ropesim.dask's table_horizon, table_bounds, check, experiment_length and experiment_train
(docs/SCALE.md) on a Dask cluster of two worker processes: each joined result equals the
single-process call (the files equal those of one process: the CLI's `--out`, and for
experiment_train ropesim.train's model files), and bad arguments are refused before anything
is submitted. ropesim.table_horizon itself against the CLI and hand-computed
values. The sweep and the killed worker: test_dask.py."""
import logging
import math
import os
import subprocess

import pandas
import pytest

dask = pytest.importorskip("dask", reason="python3-dask is not installed (scripts/setup)")
distributed = pytest.importorskip(
    "distributed", reason="python3-distributed is not installed (scripts/setup)")

import ropesim  # noqa: E402
import ropesim.dask  # noqa: E402

# Debian's tornado 6.2 under distributed 2022.12 warns about its own event loop set-up
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")

# 3 formats x 2 k = 6 rows, format-major (docs/tables/horizon.md has them at k = 1, 2)
HORIZON = dict(formats="fp8e5m2,bf16,fp16", k="1,2")
HORIZON_FLAGS = ["--formats", "fp8e5m2,bf16,fp16", "--k", "1,2"]

# The star-free (ab)* of issue 32 (test_ropesim.py): certified 43 in fp16, its member of length
# 44 rejected; exact in fp32 over these lengths. Two series, nine lengths.
AB_STAR = "!P(b & !P true) & !P(a & Y a) & !P(b & Y b) & (Y b | !P true)"
LENGTHS = dict(formula=AB_STAR, lengths="40..48", words=2, formats=["fp16", "fp32"])
# The command ropesim.experiment_length(**LENGTHS, out=PATH) records (its docstring's order)
LENGTHS_WORDS = ["experiment", "length", AB_STAR, "--alphabet", "ab", "--lengths", "40..48",
                 "--format", "fp16", "--format", "fp32", "--words", "2", "--seed", "1",
                 "--rounding", "nearest-even", "--adversarial", "2"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    with cluster, distributed.Client(cluster) as c:
        yield c


def cli_file(binary, path, words, after=()):
    """The bytes `ropesim WORDS --out PATH AFTER` writes (at PATH: the path is in the file)."""
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([binary, *words, "--out", path, *after], check=True, capture_output=True)
    with open(path, "rb") as f:
        return f.read()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_table_horizon_values_and_cli_file(ropesim_binary, tmp_path):
    path = str(tmp_path / "horizon.csv")
    table = ropesim.table_horizon(out=path, **HORIZON)
    assert read(path) == cli_file(ropesim_binary, path, ["table", "horizon", *HORIZON_FLAGS])
    assert list(table.columns) == [
        "format", "g", "k", "realization", "C", "f_large", "n_max", "fail_query",
        "fail_competitor", "offset", "gap", "delta_bound", "tie_distance", "heuristic",
        "tie_cap", "pm_ceiling"]
    assert list(table["format"]) == ["fp8e5m2"] * 2 + ["bf16"] * 2 + ["fp16"] * 2
    assert list(table["k"]) == [1, 2] * 3
    # by hand: tie_cap = pi sqrt(2/u), u = 2^-p (p = 3, 8, 11); fp16's f_large = 17.34375
    # (the least fp16 above 25 ln 2, THEORY §1); heuristic = pi sqrt(2C/f_large) - 1 at C = 2096
    for fmt, p in (("fp8e5m2", 3), ("bf16", 8), ("fp16", 11)):
        cap = table[table["format"] == fmt]["tie_cap"].iloc[0]
        assert abs(float(cap) - math.pi * math.sqrt(2 * 2.0 ** p)) < 1e-3
    fp16 = table[(table["format"] == "fp16") & (table["k"] == 1)].iloc[0]
    assert float(fp16["f_large"]) == 17.34375 and fp16["C"] == 2096
    assert abs(float(fp16["heuristic"]) - (math.pi * math.sqrt(2 * 2096 / 17.34375) - 1)) < 1e-3
    # N_max^(1) = 43 at fp16 and bf16 (docs/tables/horizon.md): query 45 fails against key 0
    assert list(table["n_max"]) == [6, 6, 43, 44, 43, 44]
    # a shard (rows [2, 4) of 6: bf16) and its file, as `--shard 2/3` writes it
    shard_path = str(tmp_path / "horizon-2.csv")
    part = ropesim.table_horizon(shard=(2, 3), out=shard_path, **HORIZON)
    # (its columns' dtypes are its own: a column of None in other rows is float there)
    pandas.testing.assert_frame_equal(part, table.iloc[2:4].reset_index(drop=True),
                                      check_dtype=False)
    assert read(shard_path) == cli_file(ropesim_binary, shard_path, ["table", "horizon",
                                                                     *HORIZON_FLAGS],
                                        after=["--shard", "2/3"])


def test_table_horizon_refuses_bad_input():
    with pytest.raises(ValueError, match="--formats"):
        ropesim.table_horizon(formats="bf17")
    with pytest.raises(ValueError, match="--k"):
        ropesim.table_horizon(formats="fp16", k="1,1")
    with pytest.raises(ValueError, match="not both"):
        ropesim.table_horizon(g="1", schedules="llama2-7b")
    with pytest.raises(TypeError, match="max_length"):
        ropesim.table_horizon(formats="fp16", max_length=1.5)
    with pytest.raises(TypeError, match="k"):
        ropesim.table_horizon(formats="fp16", k=[1, None])


def test_dask_table_horizon_equals_one_process(client, ropesim_binary, tmp_path):
    path = str(tmp_path / "horizon.tex")
    table = ropesim.dask.table_horizon(client, shards=4, out=path, **HORIZON)
    assert table.equals(ropesim.table_horizon(**HORIZON))
    assert read(path) == cli_file(ropesim_binary, path, ["table", "horizon", *HORIZON_FLAGS])


def test_dask_check_equals_one_process(client):
    arguments = dict(trials=3, max_length=64)
    single = ropesim.check(**arguments)
    assert len(single["properties"]) > 4  # every property, so that the shards cut the list
    sharded = ropesim.dask.check(client, shards=3, **arguments)
    assert sharded["table"].equals(single.pop("table"))
    sharded.pop("table")
    assert sharded == single
    names = [p["property"] for p in sharded["properties"]]
    assert len(set(names)) == len(names)
    assert sharded["passed"] + sharded["failed"] == len(names)


def test_dask_experiment_length_equals_one_process(client, ropesim_binary, tmp_path):
    path = str(tmp_path / "length.csv")
    single = ropesim.experiment_length(out=path, **LENGTHS)
    assert read(path) == cli_file(ropesim_binary, path, LENGTHS_WORDS)
    # the shards cut the lengths 40..48 into [40, 43), [43, 46), [46, 49): the first failing
    # length of fp16 (44, by hand: (ab)^22 is rejected) lies in the second
    series = {s["format"]: s for s in single["series"]}
    assert series["fp16"]["longest_all_right"] == 43
    assert series["fp32"]["longest_all_right"] == 48
    sharded_path = str(tmp_path / "length-dask.csv")
    sharded = ropesim.dask.experiment_length(client, shards=3, out=sharded_path, **LENGTHS)
    assert sharded["table"].equals(single.pop("table"))
    # the file of one CLI run at that path (the path is in the file's provenance)
    assert read(sharded_path) == cli_file(ropesim_binary, sharded_path, LENGTHS_WORDS)
    sharded.pop("table")
    assert sharded == single
    # "Y a" past fp16's certified 43: which words are right depends on the words drawn (the
    # rows change with the seed), so the shards' rows are checked to be drawn as one run's
    aliasing = dict(formula="Y a", lengths="40..52", words=6, formats=["fp16"])
    single_y = ropesim.experiment_length(**aliasing)
    other_seed = ropesim.experiment_length(**aliasing, seed=2)
    assert other_seed["rows"] != single_y["rows"]
    sharded_y = ropesim.dask.experiment_length(client, shards=3, **aliasing)
    assert sharded_y["rows"] == single_y["rows"]
    assert sharded_y["series"] == single_y["series"]
    # more shards than lengths: the empty ones add nothing
    wide = ropesim.dask.experiment_length(client, shards=12, **LENGTHS)
    wide.pop("table")
    assert wide == single


def test_dask_commands_refuse_bad_input_before_submitting(client):
    # the keys the scheduler holds now (an earlier test's released keys may not be gone yet)
    before = set(client.who_has())
    with pytest.raises(ValueError, match="--formats"):
        ropesim.dask.table_horizon(client, shards=2, formats="bf17")
    with pytest.raises(TypeError, match="unexpected argument 'shard'"):
        ropesim.dask.table_horizon(client, shards=2, shard=(1, 2))
    with pytest.raises(ValueError, match="property"):
        ropesim.dask.check(client, shards=2, property="no-such-property")
    with pytest.raises(TypeError, match="trials"):
        ropesim.dask.check(client, shards=2, trials="3")
    with pytest.raises(ValueError, match="--words"):
        ropesim.dask.experiment_length(client, shards=2, formula="Y a", words=0)
    with pytest.raises(ValueError, match="--lengths"):  # over budget in every shard
        ropesim.dask.experiment_length(client, shards=2, formula="Y a", lengths="100000,200000")
    with pytest.raises(ValueError, match="shards: must be at least 1"):
        ropesim.dask.check(client, shards=0)
    with pytest.raises(TypeError, match="progress"):
        ropesim.dask.experiment_length(client, shards=2, formula="Y a", progress="yes")
    assert not set(client.who_has()) - before  # nothing was submitted


# The smallest models ropesim.train allows: 1 layer, d_model 2, one head of dim 2 (one rotary
# block: periodic is periodic:m=2), 2 Adam steps, trained on lengths 1..2 and tested on 3..4;
# about 0.02 s a model. The grid: 2 languages x 2 schedules x 2 seeds = 8 models.
TINY_TRAIN = dict(layers=1, d_model=2, heads=1, head_dim=2, ffn_hidden=2, steps=2, batch=4,
                  train_length=2, train_words=1, test_length=4, test_stride=1, test_words=1,
                  exact_every=1, exact_words=1, formats=("bf16", "fp32"))
TRAIN_GRID = dict(languages=["MOD_3", "(aa)*"], schedules=["nope", "periodic"], seeds=[0, 1])
TIMES = ("train_seconds", "eval_seconds")  # a model's wall times: its only run-dependent values


def test_dask_experiment_train_equals_one_process(client, tmp_path):
    import json
    pytest.importorskip("torch")
    import ropesim.train as tr
    grid = dict(TRAIN_GRID, config=tr.TrainConfig(**TINY_TRAIN))
    single, single_table = tr.experiment_train(out=str(tmp_path / "one"), **grid)

    def strip(results):
        return [{k: v for k, v in r.items() if k not in TIMES} for r in results]

    # in grid order, language first, seed last (written out by hand)
    assert [(r["language"], r["schedule"], r["seed"]) for r in single] == [
        ("MOD_3", "nope", 0), ("MOD_3", "nope", 1), ("MOD_3", "periodic", 0),
        ("MOD_3", "periodic", 1), ("(aa)*", "nope", 0), ("(aa)*", "nope", 1),
        ("(aa)*", "periodic", 0), ("(aa)*", "periodic", 1)]
    assert single[2]["rope"] == ["periodic:m=2", "r1"] and single[0]["rope"] is None
    # the seed matters: seeds 0 and 1 of one model give other weights, so other outputs
    outputs = [r["evaluations"]["fp32"]["last_word"]["output"] for r in single]
    assert outputs[0] != outputs[1] and outputs[2] != outputs[3]
    files = sorted(os.listdir(tmp_path / "one" / "models"))
    assert len(files) == 16 and "MOD_3-periodic-seed1.spec.json" in files
    for shards, name in ((None, "each"), (3, "three")):  # 8 tasks; [0, 2), [2, 5), [5, 8)
        out = tmp_path / name
        results, table = ropesim.dask.experiment_train(client, shards=shards, out=str(out),
                                                       **grid)
        assert strip(results) == strip(single)
        assert table.drop(columns="train_seconds_mean").equals(
            single_table.drop(columns="train_seconds_mean"))
        assert sorted(os.listdir(out / "models")) == files
        for f in files:
            ours, theirs = read(out / "models" / f), read(tmp_path / "one" / "models" / f)
            if f.endswith(".spec.json"):
                assert ours == theirs, f  # the trained weights, as exact decimals
            else:  # the result: the same values in the same order, once the times are out
                ours, theirs = (json.loads(x) for x in (ours, theirs))
                assert json.dumps(strip([ours])) == json.dumps(strip([theirs])), f
    # stored for the same config: reused, nothing trained or submitted
    again, _ = ropesim.dask.experiment_train(client, out=str(tmp_path / "each"), **grid)
    assert all(r.pop("reused") for r in again)
    assert json.dumps(strip(again)) == json.dumps(strip(single))  # read back: lists for tuples


def test_dask_experiment_train_refuses_bad_input_before_submitting(client):
    pytest.importorskip("torch")
    import ropesim.train as tr
    before = set(client.who_has())
    tiny = tr.TrainConfig(**TINY_TRAIN)
    with pytest.raises(TypeError, match="unexpected argument 'jobs'"):
        ropesim.dask.experiment_train(client, jobs=2, config=tiny)
    with pytest.raises(TypeError, match="languages: expected a list"):
        ropesim.dask.experiment_train(client, languages="MOD_3", config=tiny)
    with pytest.raises(ValueError, match="language 'MOD_4'; accepted"):
        ropesim.dask.experiment_train(client, languages=["MOD_4"], config=tiny)
    with pytest.raises(ValueError, match="schedule 'sideways'"):
        ropesim.dask.experiment_train(client, schedules=["sideways"], config=tiny)
    with pytest.raises(ValueError, match="seeds: expected ints >= 0"):
        ropesim.dask.experiment_train(client, seeds=[-1], config=tiny)
    with pytest.raises(ValueError, match="seeds: 0 given twice"):
        ropesim.dask.experiment_train(client, seeds=[0, 0], config=tiny)
    with pytest.raises(TypeError, match="config: expected a ropesim.train.TrainConfig"):
        ropesim.dask.experiment_train(client, config=dict(TINY_TRAIN))
    with pytest.raises(ValueError, match="--formats"):
        ropesim.dask.experiment_train(client, config=tr.TrainConfig(formats=("bf17",)))
    with pytest.raises(ValueError, match="test_length"):
        ropesim.dask.experiment_train(client, config=tr.TrainConfig(test_length=10))
    with pytest.raises(ValueError, match="shards: must be at least 1"):
        ropesim.dask.experiment_train(client, shards=0, config=tiny)
    with pytest.raises(TypeError, match="progress: expected a bool"):
        ropesim.dask.experiment_train(client, progress=print, config=tiny)
    assert not set(client.who_has()) - before  # nothing was submitted


# table bounds: critical-dim over three models (one row each), two shards of models
CRITICAL = dict(kind="critical-dim", presets="llama2-7b,phi-2,gemma-7b", realizations="r1",
                formats="bf16", positions=4096)
CRITICAL_FLAGS = ["--kind", "critical-dim", "--presets", "llama2-7b,phi-2,gemma-7b",
                  "--realizations", "r1", "--positions", "4096", "--formats", "bf16"]
# semantic-drift: three models, two rows each (the model's schedule, p-RoPE at p = 1/2)
DRIFT = dict(kind="semantic-drift", presets="phi-2,gpt-neox-20b,llama2-7b", p="0.5",
             realizations="r1", formats="bf16", max_length=4096)
DRIFT_FLAGS = ["--kind", "semantic-drift", "--formats", "bf16", "--presets",
               "phi-2,gpt-neox-20b,llama2-7b", "--realizations", "r1", "--p", "0.5",
               "--max-length", "4096"]
# nope-previous-token: 2 formats x 3 summations = 6 independent rows, each seeded with --seed
NOPE = dict(kind="nope-previous-token", formats="bf16,fp16", trials=20)
NOPE_FLAGS = ["--kind", "nope-previous-token", "--formats", "bf16,fp16", "--trials", "20"]


def nope_bound(p, keys, summation):
    """Higham's bound B on |o - o'| (docs/BOUNDS.md §4), u = 2^-p, gamma_m = m u / (1 - m u)."""
    u = 2.0 ** -p
    m = {"sequential": keys - 1, "pairwise": math.ceil(math.log2(keys)), "exact": 1}[summation]
    g = m * u / (1 - m * u)
    return (1 + u) * (1 + g) / (1 - g) - (1 - u) * (1 - g) / (1 + g)


def test_table_bounds_values_and_cli_files(ropesim_binary, tmp_path):
    path = str(tmp_path / "critical.csv")
    critical = ropesim.table_bounds(out=path, **CRITICAL)
    assert read(path) == cli_file(ropesim_binary, path,
                                  ["table", "bounds", *_bounds_order(CRITICAL_FLAGS)])
    llama = critical[critical["preset"] == "llama2-7b"].iloc[0]
    # Liu et al. 2023 report d_extra = 92 for LLaMA2; T_extra = 2 pi 10^(4 * 92/128)
    assert llama["d_extra"] == 92
    assert abs(float(llama["T_extra"]) - 2 * math.pi * 10 ** (4 * 92 / 128)) < 1e-6 * 4712
    path = str(tmp_path / "nope.md")
    nope = ropesim.table_bounds(out=path, **NOPE)
    assert read(path) == cli_file(ropesim_binary, path, ["table", "bounds", *NOPE_FLAGS])
    for _, row in nope.iterrows():
        p = {"bf16": 8, "fp16": 11}[row["format"]]
        assert abs(float(row["bound"]) - nope_bound(p, 16, row["summation"])) < 1e-12
        if row["summation"] == "exact":  # one rounding per sum: o = o' bit for bit
            assert row["identical"] == row["pairs"] == 20


def _bounds_order(flags):
    """`flags` (pairs) in the order ropesim.table_bounds records them (`table bounds --help`)."""
    order = ["--kind", "--dim", "--lengths", "--from", "--formats", "--realization",
             "--finite-max-length", "--presets", "--realizations", "--positions"]
    pairs = [flags[i:i + 2] for i in range(0, len(flags), 2)]
    return [w for pair in sorted(pairs, key=lambda p: order.index(p[0])) for w in pair]


def test_dask_table_bounds_equals_one_process(client, ropesim_binary, tmp_path):
    path = str(tmp_path / "critical.tex")
    table = ropesim.dask.table_bounds(client, shards=2, out=path, **CRITICAL)
    assert table.equals(ropesim.table_bounds(**CRITICAL))
    assert read(path) == cli_file(ropesim_binary, path,
                                  ["table", "bounds", *_bounds_order(CRITICAL_FLAGS)])
    path = str(tmp_path / "drift.csv")
    table = ropesim.dask.table_bounds(client, shards=2, out=path, **DRIFT)
    assert table.equals(ropesim.table_bounds(**DRIFT))
    assert list(table["preset"]) == ["phi-2"] * 2 + ["gpt-neox-20b"] * 2 + ["llama2-7b"] * 2
    assert read(path) == cli_file(ropesim_binary, path, ["table", "bounds", *DRIFT_FLAGS])
    path = str(tmp_path / "nope.json")
    table = ropesim.dask.table_bounds(client, shards=4, out=path, **NOPE)
    assert table.equals(ropesim.table_bounds(**NOPE))
    assert read(path) == cli_file(ropesim_binary, path, ["table", "bounds", *NOPE_FLAGS])


def test_table_bounds_refuses_bad_input(client):
    before = set(client.who_has())
    with pytest.raises(ValueError, match="--kind"):
        ropesim.table_bounds(kind="no-such-kind")
    with pytest.raises(ValueError, match="--positions"):
        ropesim.table_bounds(kind="critical-dim", positions=1)
    with pytest.raises(TypeError, match="dim"):
        ropesim.table_bounds(kind="base-context", dim=1.5)
    with pytest.raises(TypeError, match="unexpected argument 'bogus'"):
        ropesim.table_bounds(kind="no-decay", bogus=1)
    # the kinds whose rows depend on the rows before them have no shards
    with pytest.raises(ValueError, match="has no shards"):
        ropesim.dask.table_bounds(client, shards=2, kind="base-context")
    with pytest.raises(ValueError, match="has no shards"):
        ropesim.dask.table_bounds(client, shards=2, kind="no-decay")
    with pytest.raises(ValueError, match="--formats"):
        ropesim.dask.table_bounds(client, shards=2, kind="positional-head", formats="bf17")
    assert not set(client.who_has()) - before  # nothing was submitted
