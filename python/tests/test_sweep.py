"""ropesim.sweep (docs/PYTHON.md): the sweep table from the library in this process. Values are
checked by hand (periodic schedules of exact turns under r1) and against the `ropesim`
executable run on the same command (its bytes, its --json rows, its merge)."""
import json
import math
import os
import subprocess

import pandas
import pytest

import ropesim

# A small grid: two schedules x two realizations x two formats = 8 rows, well under a second.
GRID = dict(schedules="single:g=1;conventional:base=10000,dim=8", formats="fp16,bf16",
            realizations="r1,r2", positions=256)
GRID_FLAGS = ["--schedules", "single:g=1;conventional:base=10000,dim=8", "--formats",
              "fp16,bf16", "--realizations", "r1,r2", "--positions", "256"]


def run_cli(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def records(frame):
    """The DataFrame's rows as JSON-typed dicts (NaN from a None in a numeric column -> None)."""
    out = []
    for row in frame.to_dict(orient="records"):
        clean = {}
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif isinstance(value, float) and value.is_integer():
                value = int(value)
            clean[key] = value
        out.append(clean)
    return out


def test_sweep_periodic_by_hand():
    # periodic:m=4: one block, θ = 2π/4; r1 rounds cos and sin of the exact angle i·π/2, which
    # are 1, 0, -1, 0 exactly: 4 distinct rotations, period 4, first repeat (0, 4), the largest
    # class {0, 4, ..., 96} of 25 positions. periodic:m=3: θ = 2π/3; cos(2πi/3) is 1 or -1/2
    # (exact) and sin 0 or ±√3/2 (rounded the same way each time): 3 distinct, period 3,
    # first repeat (0, 3), the class {0, 3, ..., 99} of 34 positions.
    t = ropesim.sweep(schedules="periodic:m=4;periodic:m=3", formats=["bf16", "fp32"],
                      realizations="r1", positions=100)
    assert isinstance(t, pandas.DataFrame)
    assert list(t["schedule"]) == ["periodic:1/4"] * 2 + ["periodic:1/3"] * 2  # as specs
    assert list(t["format"]) == ["bf16", "fp32", "bf16", "fp32"]
    assert list(t["distinct"]) == [4, 4, 3, 3]
    assert list(t["period"]) == [4, 4, 3, 3]
    assert list(t["largest_class"]) == [25, 25, 34, 34]
    assert list(t["first_repeat"]) == [[0, 4], [0, 4], [0, 3], [0, 3]]
    assert list(t["periodic"]) == [True] * 4
    assert list(t["blocks"]) == [1] * 4 and list(t["min_block_distinct"]) == [4, 4, 3, 3]
    assert list(t["max_period"]) == [50] * 4  # default P_max = N/2
    assert list(t["rounding"]) == ["nearest-even"] * 4
    assert t["witnessed"].isna().all()  # periodic: no witnesses counted


def test_sweep_equals_cli_json(ropesim_binary):
    expected = json.loads(run_cli(ropesim_binary, "sweep", *GRID_FLAGS, "--json", "--quiet"))
    got = ropesim.sweep(**GRID)
    assert set(got.columns) == set(expected[0])  # JSON objects list their keys sorted
    # the CLI's column order: the header of its table view with every column
    header = run_cli(ropesim_binary, "sweep", *GRID_FLAGS, "--columns", "all", "--quiet")
    assert list(got.columns) == header.splitlines()[0].split()
    assert records(got) == expected
    assert len(got) == 8


@pytest.mark.parametrize("extension", ["csv", "json", "md", "tex"])
def test_sweep_out_is_the_cli_file(ropesim_binary, tmp_path, extension):
    # The file ropesim.sweep writes names the command `ropesim sweep FLAGS --out PATH` (flags
    # in the documented order); that command, run, writes the same bytes to the same path.
    path = str(tmp_path / f"sweep.{extension}")
    ropesim.sweep(**GRID, out=path)
    ours = open(path, "rb").read()
    os.remove(path)
    run_cli(ropesim_binary, "sweep", *GRID_FLAGS, "--out", path)
    assert open(path, "rb").read() == ours


def test_sweep_shards_merge_into_the_single_run(ropesim_binary, tmp_path):
    whole = ropesim.sweep(**GRID)
    parts = [ropesim.sweep(**GRID, shard=(i, 3), out=str(tmp_path / f"s{i}.csv"))
             for i in (1, 2, 3)]
    # rows [0, 2), [2, 5), [5, 8) of 8 (floor(i·8/3))
    assert [len(p) for p in parts] == [2, 3, 3]
    assert records(pandas.concat(parts, ignore_index=True)) == records(whole)
    merged = str(tmp_path / "merged.csv")
    run_cli(ropesim_binary, "merge", *(str(tmp_path / f"s{i}.csv") for i in (3, 1, 2)),
            "--out", merged)
    ours = open(merged, "rb").read()
    os.remove(merged)
    run_cli(ropesim_binary, "sweep", *GRID_FLAGS, "--out", merged)
    assert open(merged, "rb").read() == ours


def test_sweep_progress_and_jobs():
    seen = []
    t = ropesim.sweep(**GRID, jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (8, 8) and len(seen) >= 2
    assert records(t) == records(ropesim.sweep(**GRID, jobs=1))


def test_sweep_bad_input(ropesim_binary):
    def cli_message(*args):
        r = subprocess.run([ropesim_binary, "sweep", *args], capture_output=True, text=True)
        assert r.returncode == 2
        return r.stderr.strip().removeprefix("ropesim: error: ")

    for kwargs, flags in [
        (dict(formats="bf17"), ["--formats", "bf17"]),
        (dict(models="llama9"), ["--models", "llama9"]),
        (dict(models=""), ["--models", ""]),
        (dict(schedules="single:g=1", realizations="r9"), ["--schedules", "single:g=1",
                                                          "--realizations", "r9"]),
    ]:
        with pytest.raises(ValueError) as e:
            ropesim.sweep(**kwargs)
        assert str(e.value) == cli_message(*flags)
    # N below 2: attention::check_census_limits (the CLI's option check refuses it before)
    with pytest.raises(ValueError, match="--positions: N must be at least 2, got 1"):
        ropesim.sweep(schedules="single:g=1", positions=1)
    with pytest.raises(ValueError, match="accepted: integers 1 <= I <= N"):
        ropesim.sweep(**GRID, shard=(3, 2))
    with pytest.raises(ValueError, match="--out: unknown output extension"):
        ropesim.sweep(**GRID, out="table.xls")
    for kwargs in (dict(positions=1.5), dict(positions=None, jobs=True), dict(formats=3),
                   dict(shard=[1, 2]), dict(models=["llama2-7b", None])):
        with pytest.raises(TypeError):
            ropesim.sweep(**{**GRID, **kwargs})
