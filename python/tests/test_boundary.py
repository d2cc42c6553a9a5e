"""What a new user meets at the Python boundary (session 21): a run past the certified length
says so, None and text in `round` are refused alike, budget messages name the Python keyword,
and out-of-range counts are one line naming the argument. Expected values are by hand (the
language of ``Y a``: the last symbol is a) or the `ropesim` executable's own text."""
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ropesim


# --- 1. Model.run past the certified length ---------------------------------------------------

def test_run_past_the_certified_length_warns_and_says_so():
    m = ropesim.compile("Y a", format="fp16")
    n = m.report["certified_length"]
    assert isinstance(n, int) and n >= 2
    inside, past = "b" * (n - 1) + "a", "b" * (n + 17) + "a"  # both in L(Y a): last symbol a
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning within the certificate
        r = m.run(inside)
    assert r["accept"] is True and r["within_certified_length"] is True
    assert r["certified_length"] == n
    with pytest.warns(ropesim.CertificationWarning,
                      match=rf"has {n + 18} symbols, more than the certified length {n}\b"):
        r = m.run(past)
    assert r["within_certified_length"] is False and r["certified_length"] == n
    with pytest.warns(RuntimeWarning):  # a RuntimeWarning subclass, from trace as well
        assert m.trace(past)["within_certified_length"] is False


def test_the_cli_warns_at_the_same_length(ropesim_binary, tmp_path):
    m = ropesim.compile("Y a", format="fp16")
    n = m.report["certified_length"]
    m.save(str(tmp_path / "m.json"))
    for length, warned in ((n, False), (n + 1, True)):
        r = subprocess.run([ropesim_binary, "run", str(tmp_path / "m.json"), "--input",
                            "b" * (length - 1) + "a", "--json"], capture_output=True, text=True)
        assert ("more than the certified length" in r.stderr) == warned
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = m.run("b" * (length - 1) + "a")
        assert (len(seen) == 1) == warned and got["within_certified_length"] == (not warned)


def test_model_leaves_no_temporary_directory_and_no_resource_warning():
    code = ("import ropesim\n"
            "m = ropesim.compile('Y a', format='fp16')\n"
            "m.run('b' * 60 + 'a')\n"
            "print(m.path)\n")
    r = subprocess.run([sys.executable, "-X", "dev", "-W", "ignore::RuntimeWarning",
                        "-c", code], capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert "ResourceWarning" not in r.stderr, r.stderr
    assert not os.path.exists(os.path.dirname(r.stdout.strip()))
    with ropesim.compile("Y a", format="fp16") as m:
        assert os.path.exists(m.path)
    assert not os.path.exists(m.path) and m.run("ba")["accept"] is True


# --- 2. None and text in round ----------------------------------------------------------------

@pytest.mark.parametrize("values", [None, [None, 1.0], np.array([0.1, None]),
                                    [[1.0], [None]], np.array([None], dtype=object)])
def test_round_refuses_none_anywhere(values):
    for f in (ropesim.round, ropesim.round_flags):
        with pytest.raises(TypeError, match=r"^values: None is not a number"):
            f(values, "bf16")


@pytest.mark.parametrize("values", ["0.1", ["0.1"], np.array(["0.1"]), [1.0, "2"],
                                    np.array([1.0, "x"], dtype=object)])
def test_round_refuses_text_as_a_scalar_and_in_a_list(values):
    with pytest.raises(TypeError, match=r"^values: .* is text, not a number"):
        ropesim.round(values, "bf16")


def test_round_still_takes_numbers_of_every_kind():
    # 0.1 in bf16 (p = 8): 0.1 = 1.6 * 2^-4, 1.6 * 128 = 204.8 -> 205, 205/128 * 2^-4
    assert ropesim.round(np.array([0.1, 1], dtype=object), "bf16").tolist() == [205 / 2048, 1.0]
    assert ropesim.round([2**60, -3], "fp64").tolist() == [2.0**60, -3.0]


def test_round_refuses_a_number_beyond_binary64():
    with pytest.raises(ValueError, match=r"^values: .* is beyond binary64"):
        ropesim.round([2**1100], "fp64")
    with pytest.raises(ValueError, match=r"beyond binary64"):
        ropesim.round(-(2**1024), "fp32")


# --- 3. budget messages in Python's words -----------------------------------------------------

def test_budget_messages_name_allow_slow_true(ropesim_binary):
    for call in (lambda: ropesim.census("llama2-7b", "r2", "fp32", positions=2**31),
                 lambda: ropesim.horizon(max_length=10**9)):
        with pytest.raises(ValueError, match=r"pass allow_slow=True") as e:
            call()
        assert "--allow-slow" not in str(e.value)
    with pytest.raises(ValueError, match=r"pass --allow-slow"):  # the CLI keeps its words
        ropesim.cli("horizon", "--max-length", str(10**9))


# --- 4. arguments out of range or of the wrong type: one line naming them ---------------------

def one_line(e):
    return "\n" not in str(e.value) and "incompatible function arguments" not in str(e.value)


def test_round_format_of_the_wrong_type():
    for kwargs in (dict(format=None), dict(format="bf16", rounding=None)):
        with pytest.raises(TypeError, match=r"^(format|rounding): expected a str") as e:
            ropesim.round(1.0, **kwargs)
        assert one_line(e)


def test_counts_beyond_uint64_are_one_line():
    for name, call in (
            ("positions", lambda: ropesim.rotation_table("llama2-7b", "r1", "bf16", 2**64)),
            ("positions", lambda: ropesim.census("llama2-7b", positions=2**64)),
            ("max_length", lambda: ropesim.horizon(max_length=2**64)),
            ("start", lambda: ropesim.rotation_table("llama2-7b", "r1", "bf16", 2, start=2**64))):
        with pytest.raises(ValueError, match=rf"^{name}: {2**64} is out of range; accepted: an "
                                             rf"integer in \d+\.\.{2**64 - 1}$") as e:
            call()
        assert one_line(e)


def test_jobs_is_capped_as_the_cli_caps_it(ropesim_binary):
    cli = subprocess.run([ropesim_binary, "sweep", "--jobs", "1000"], capture_output=True,
                         text=True)
    assert cli.returncode == 2
    accepted = re.search(r"accepted: an integer in (\d+\.\.\d+)", cli.stderr).group(1)
    assert accepted == "0..256"
    for call in (lambda jobs: ropesim.census("single:g=1", positions=10, jobs=jobs),
                 lambda jobs: ropesim.rotation_table("single:g=1", "r1", "fp32", 3, jobs=jobs),
                 lambda jobs: ropesim.horizon(max_length=50, jobs=jobs),
                 lambda jobs: ropesim.sweep(schedules="single:g=1", formats="fp32",
                                            realizations="r1", positions=10, jobs=jobs),
                 lambda jobs: ropesim.table_horizon(formats="fp16", max_length=20, jobs=jobs)):
        with pytest.raises(ValueError, match=rf"^jobs: 1000 is out of range; accepted: an "
                                             rf"integer in {re.escape(accepted)}$"):
            call(1000)
        call(256)  # the CLI's largest
