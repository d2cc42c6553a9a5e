"""Tests of the Python module `ropesim` (docs/PYTHON.md). Each asserts values derived
independently: by hand (the derivation in the comment), numpy's own float16 conversion, or the
`ropesim` executable for the same command (whose values the C++ suites test)."""
import json
import subprocess
import threading
import time
from fractions import Fraction

import numpy as np
import pytest

import ropesim


def cli_json(binary, *args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def exact(text):
    """The exact value the CLI writes as text ("P/Q", an exact decimal, "2^k"), read by hand."""
    if "^" in text:
        sign = -1 if text.startswith("-") else 1
        return sign * Fraction(2) ** int(text.lstrip("-")[2:])
    return Fraction(text)


def same_as_cli(got, cli):
    """True when `got` (the module's value) is the CLI's JSON `cli` with its exact texts as
    numbers: the same keys and items, each number equal to the CLI's number or exact text."""
    if isinstance(cli, dict):
        return isinstance(got, dict) and got.keys() == cli.keys() and all(
            same_as_cli(got[k], cli[k]) for k in cli)
    if isinstance(cli, list):
        return isinstance(got, list) and len(got) == len(cli) and all(
            same_as_cli(g, c) for g, c in zip(got, cli))
    if isinstance(cli, str) and not isinstance(got, str):
        return exact(cli) == got
    return type(got) is type(cli) and got == cli


def cli_error(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    assert r.returncode == 2
    return r.stderr.strip().removeprefix("ropesim: error: ")


# --- round -----------------------------------------------------------------------------------

def test_round_bf16_by_hand():
    # 0.1 = 1.6·2^-4; bf16 keeps 7 fraction bits: 1.6·128 = 204.8 -> 205 (nearest), 204
    # (toward zero): 205/2048 = 0.10009765625, 204/2048 = 0.099609375.
    assert ropesim.round([0.1], "bf16")[0] == 0.10009765625
    assert ropesim.round([0.1], "bf16", "toward-zero")[0] == 0.099609375
    assert ropesim.round(np.array([[0.1, -0.1]]), "bf16").shape == (1, 2)


def test_round_matches_numpy_float16():
    rng = np.random.default_rng(21)
    x = np.concatenate([
        rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 6, 20000),
        [0.0, -0.0, 65504.0, 65519.99, 65520.0, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26,
         np.inf, -np.inf, 1e300],
    ])
    with np.errstate(over="ignore"):  # numpy warns on the overflow to inf it performs
        expected = x.astype(np.float16).astype(np.float64)
    got = ropesim.round(x, "fp16")
    assert np.array_equal(got.view(np.uint64), expected.view(np.uint64))  # signed zeros too
    assert np.isnan(ropesim.round([np.nan], "fp16")[0])


def test_round_flags_by_hand():
    f = ropesim.round_flags([1.0, 0.1, 1e6, 1e-8, np.inf], "fp16")
    # 1.0 is in fp16; 0.1 is not; 1e6 > 65520 overflows to inf; 1e-8 < 2^-25 (half the least
    # subnormal 2^-24) rounds to 0: tiny and inexact; inf is exact.
    assert list(f["value"][:4]) == [1.0, 0.0999755859375, np.inf, 0.0]
    assert list(f["inexact"]) == [False, True, True, True, False]
    assert list(f["overflow"]) == [False, False, True, False, False]
    assert list(f["underflow"]) == [False, False, False, True, False]
    assert not f["invalid"].any() and not f["division_by_zero"].any()


def test_round_bad_format_is_the_cli_message():
    with pytest.raises(ValueError, match="bf17"):
        ropesim.round([1.0], "bf17")
    with pytest.raises(ValueError, match="rounding"):
        ropesim.round([1.0], "bf16", "sideways")


# --- rotation_table --------------------------------------------------------------------------

def distinct_rows(cos, sin):
    return len(np.unique(np.concatenate([cos, sin], axis=1).view(np.uint64), axis=0))


def test_rotation_table_llama2_r2_bf16_has_the_census_rows(ropesim_binary):
    cos, sin = ropesim.rotation_table("llama2-7b", "r2", "bf16", positions=65536)
    assert cos.shape == sin.shape == (65536, 64) and cos.dtype == np.float64
    assert distinct_rows(cos, sin) == 1281  # issue 21 "done when"
    census = cli_json(ropesim_binary, "rotations", "--schedule", "llama2-7b", "--realization",
                      "r2", "--format", "bf16", "--positions", "65536", "--json")
    assert census["distinct"] == 1281
    per_block = [len(np.unique(np.stack([cos[:, d], sin[:, d]], 1).view(np.uint64), axis=0))
                 for d in range(64)]
    assert per_block == census["distinct_per_block"]


def test_rotation_table_by_hand():
    # single:g=1, r1, bf16: position 1 is (round(cos 1), round(sin 1)) = (0.5390625, 0.83984375)
    # (cos 1 = 1.0806·2^-1 -> 138/256; sin 1 = 1.6829·2^-1 -> 215/256); position 0 is (1, 0).
    cos, sin = ropesim.rotation_table("single:g=1", "r1", "bf16", positions=2)
    assert cos.tolist() == [[1.0], [0.5390625]] and sin.tolist() == [[0.0], [0.83984375]]
    # Every value is a bf16 element: rounding it into bf16 again changes nothing.
    cos, sin = ropesim.rotation_table("llama3-8b", "hf", "bf16", positions=100, start=8000)
    assert np.array_equal(ropesim.round(cos, "bf16"), cos)


def test_rotation_table_start_and_jobs():
    cos, sin = ropesim.rotation_table("conventional:base=10000,dim=16", "r2", "fp16", 300)
    c2, s2 = ropesim.rotation_table("conventional:base=10000,dim=16", "r2", "fp16", 50,
                                    start=250, jobs=2)
    assert np.array_equal(c2, cos[250:]) and np.array_equal(s2, sin[250:])
    c3, s3, flags = ropesim.rotation_table("conventional:base=10000,dim=16", "r2", "fp16", 300,
                                           jobs=1, flags=True)
    assert np.array_equal(c3, cos) and flags.shape == (300,) and not flags.any()


def test_rotation_table_bad_input():
    with pytest.raises(ValueError, match="realization"):
        ropesim.rotation_table("llama2-7b", "r9", "bf16", 10)
    with pytest.raises(ValueError, match="binary64"):
        ropesim.rotation_table("llama2-7b", "r1", "p=64,e=15", 10)


def test_rotation_table_releases_the_gil():
    ticks = 0
    worker = threading.Thread(
        target=lambda: ropesim.rotation_table("llama2-7b", "r1", "bf16", 1 << 15, jobs=1))
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 20  # the main thread ran while C++ computed


# --- the commands ----------------------------------------------------------------------------

def test_census_is_the_cli_json(ropesim_binary):
    args = dict(schedule="single:g=1", realization="r2", format="bf16", positions=300,
                start=65536)
    got = ropesim.census(**args)
    cli = cli_json(ropesim_binary, "rotations", "--schedule", "single:g=1", "--realization",
                   "r2", "--format", "bf16", "--positions", "300", "--start", "65536", "--json")
    assert got == cli
    # attention/census/census.hpp's example: bf16 has 8 bits, so î = 65536 for i <= 65792: 257
    # positions share one rotation.
    assert got["largest_class"] == 257 and got["largest_class_position"] == 65536


def test_census_bad_input_is_the_cli_message(ropesim_binary):
    with pytest.raises(ValueError) as e:
        ropesim.census("llama2-7b", format="bf17", positions=16)
    assert str(e.value) == cli_error(ropesim_binary, "rotations", "--schedule", "llama2-7b",
                                     "--format", "bf17", "--positions", "16", "--json")


def test_formats_exact_values():
    table = ropesim.formats("fp16,bf16")
    fp16 = table[table["name"] == "fp16"].iloc[0]
    # fp16: max (2 - 2^-10)·2^15 = 65504; f_large = the least fp16 above 25·ln 2 = 17.3287
    # (exp(-f) must fall below 2^-25, half the least subnormal), on the 2^-6 grid of [16, 32):
    # 1110/64 = 17.34375.
    assert fp16["max"] == 65504 and fp16["f_large"] == 17.34375
    bf16 = table[table["name"] == "bf16"].iloc[0]
    assert bf16["max"] == (2 - 2 ** -7) * 2.0 ** 127


def test_horizon_is_the_cli_json(ropesim_binary):
    got = ropesim.horizon(k=1, g=1, format="fp16", C=64)
    cli = cli_json(ropesim_binary, "horizon", "--g", "1", "--k", "1", "--C", "64", "--format",
                   "fp16", "--json")
    assert same_as_cli(got, cli)


def test_compile_run_trace(ropesim_binary, tmp_path):
    # THEORY §4: a formula accepts w iff it holds at the EOS position N+1, so 'Y a' accepts
    # exactly the words whose last symbol is a; the classifier is +-1/2 there (THEORY §7 C1).
    model = ropesim.compile("Y a", alphabet="ab", format="fp16")
    assert model.report and model.spec["layers"]
    for word in ["a", "b", "ab", "ba", "aab", "abb", "bba", "abab"]:
        out = model.run(word)
        assert out["accept"] is word.endswith("a")
        assert out["output"] == (0.5 if word.endswith("a") else -0.5)
        assert out["tokens"] == ["BOS", *word, "EOS"]
    trace = model.trace("ab")
    assert trace["accept"] is False and trace["trace"]
    path = tmp_path / "model.json"
    model.save(str(path))
    cli = cli_json(ropesim_binary, "run", str(path), "--input", "ba", "--json")
    got = model.run("ba")
    # the two keys Python adds (docs/PYTHON.md "Past the certified length"), then the CLI's
    assert got.pop("certified_length") == model.report["certified_length"]
    assert got.pop("within_certified_length") is True
    assert same_as_cli(got, cli)
    assert cli["output_exact"] == "0.5"  # an exact decimal string in the CLI, a float here
    with pytest.raises(ValueError):
        model.run("abc")
    with pytest.raises(ValueError):
        ropesim.compile("Y (", alphabet="ab")


def test_classify_and_check():
    # (aa)* over {a}: its minimal DFA is the 2-cycle 0 -a-> 1 -a-> 0 (not partially ordered,
    # so not LTL[P]) and it counts modulo 2: LTL[P,MOD] with k = 2 (THEORY §5).
    # (a|b)*a: states "last symbol is not a" (0) and "is a" (1), a: 0 -> 1, b: 1 -> 0, a cycle
    # again, so not LTL[P] either.
    parity = ropesim.classify(alphabet="a", regex="(aa)*")
    assert parity["class"] == "LTL[P,MOD]" and parity["k"] == 2 and parity["states"] == 2
    assert parity["witness"]["kind"] == "two-state cycle"
    star = ropesim.classify(alphabet="ab", regex="(a|b)*a")
    assert star["class"] != "LTL[P]" and star["states"] == 2
    assert star["witness"]["kind"] in ("two-state cycle", "branching component")
    with pytest.raises(ValueError, match="regex"):
        ropesim.classify(alphabet="ab", regex="(a")
    result = ropesim.check(property="all", trials=3, max_length=20)
    assert result["failed"] == 0 and result["passed"] == len(result["properties"]) > 0
    assert list(result["table"]["failed"]) == [0] * result["passed"]
    with pytest.raises(ValueError, match="property"):
        ropesim.check(property="no-such-property", trials=1)


def test_position_gpt_neox_1003():
    # attention/realisations/realisation.hpp, NUMERIC §4 (GPT-NeoX #1003): r2 in fp16 on
    # conventional:base=10000,dim=32 at I = 1857, block 1: the exact angle is
    # 1857·10000^(-1/16) = 1044.27; fp16 spaces [1024, 2048) by 1, so φ = round(θ̂·î) = 1045
    # and the realised cos is fp16(cos 1045), numpy's own float16 of the binary64 cos.
    report = ropesim.position("conventional:base=10000,dim=32", 1857, realization="r2",
                              format="fp16")
    block = report["blocks"][1]
    assert block["exact_angle_text"] == "1857*10000^(-1/16)"
    assert abs(block["exact_angle"] - 1857 * 10000 ** (-1 / 16)) < 1e-9
    assert block["steps"]["phi"]["decimal"] == 1045
    assert block["cos"]["decimal"] == float(np.float16(np.cos(1045.0)))
    assert block["sin"]["decimal"] == float(np.float16(np.sin(1045.0)))
    assert list(report["table"]["block"]) == list(range(16))


def test_census_fast_path_counters():
    # single:g=1 (one block), r1 fp32, positions 0..99: every position realised once (all 100
    # rotations distinct, nothing verified again), position 0 an exact case (i = 0).
    got = ropesim.census("single:g=1", "r1", "fp32", positions=100, jobs=2)
    assert got["distinct"] == 100
    fast = got["fast_path"]
    assert fast["evaluations"] == 100 and fast["exact_cases"] == 1 and fast["exact_only"] == 0
    assert all(isinstance(v, int) for v in fast.values())
    assert ropesim.census("single:g=1", "r1", "fp32", positions=100, jobs=1) == got


def test_position_values_are_numbers():
    # cos 1 = 0.5403023058681397…: fp32 spaces [0.5, 1) by 2^-24, cos 1·2^24 = 9064768.49 ->
    # 9064768; at p = 64 by 2^-64: 9966818358784711826.49 -> …826 = 4983409179392355913/2^63,
    # which a float cannot hold (64 bits): the Fraction beside the nearest float.
    cos = ropesim.position("single:g=1", 1, format="fp32")["blocks"][0]["cos"]
    assert cos["value"] == 9064768 / 2 ** 24 and isinstance(cos["value"], float)
    assert "value_exact" not in cos and isinstance(cos["hex"], str)
    wide = ropesim.position("single:g=1", 1, format="p=64,e=15")["blocks"][0]["cos"]
    assert wide["value_exact"] == Fraction(4983409179392355913, 2 ** 63)
    assert wide["value"] == float(wide["value_exact"])


def test_horizon_exact_values():
    # g = 0.1 = 1/10 is not a float: 0.1 with the Fraction beside it; fp32's f_large is the least
    # fp32 above 150 ln 2 = 103.9720771 on the 2^-17 grid: 13627829/2^17, a float.
    got = ropesim.horizon(k=1, g="0.1", format="fp32", C=1000)
    assert got["g"] == 0.1 and got["g_exact"] == Fraction(1, 10)
    assert got["f_large"] == 13627829 / 2 ** 17 and "f_large_exact" not in got
    # gap: the nearest float, its exact decimal beside it (a float or a Fraction here)
    assert float(got["gap_exact"]) == got["gap"]


def test_experiment_length_balanced_words(ropesim_binary):
    # The star-free (ab)* of issue 32 in fp16 (certified 43): by hand, one member (ab)^(n/2)
    # at each even length and none at odd ones; the member of length 44 is rejected.
    formula = "!P(b & !P true) & !P(a & Y a) & !P(b & Y b) & (Y b | !P true)"
    result = ropesim.experiment_length(formula, lengths="41..44", words=2)
    rows = result["rows"]
    assert [r["members"] for r in rows] == [0, 1, 0, 1]
    assert rows[0]["accuracy_members"] is None and rows[0]["members_empty"] is True
    assert rows[1]["accuracy_members"] == 1.0 and rows[3]["accuracy_members"] == 0.0
    assert rows[3]["balanced_accuracy"] < 1.0
    assert list(result["table"]["length"]) == [41, 42, 43, 44]
    with pytest.raises(ValueError, match="--words"):
        ropesim.experiment_length(formula, words=0)


# The boundary (issue 39): what the command line cannot carry is refused, types are checked.
def test_nul_in_text_is_refused_not_cut():
    with pytest.raises(ValueError, match="NUL"):
        ropesim.compile("P a\x00 & bogus", alphabet="ab", format="fp16")
    model = ropesim.compile("P a", alphabet="ab", format="fp16")
    with pytest.raises(ValueError, match="NUL"):
        model.run("ab\x00ba")
    with pytest.raises(TypeError, match="--input"):
        model.run(None)
    assert model.run("ab")["accept"] is True


def test_round_refuses_none_and_text():
    with pytest.raises(TypeError):
        ropesim.round(None, "bf16")
    with pytest.raises(TypeError):
        ropesim.round_flags("0.1", "bf16")


def test_rotation_table_counts_are_ints_at_least_one():
    for bad in (1.5, None, True, "3"):
        with pytest.raises(TypeError, match="positions"):
            ropesim.rotation_table("single:g=1", "r1", "fp16", bad)
    with pytest.raises(ValueError, match="positions: must be at least 1"):
        ropesim.rotation_table("single:g=1", "r1", "fp16", 0)
    with pytest.raises(ValueError, match="start: must be at least 0"):
        ropesim.rotation_table("single:g=1", "r1", "fp16", 4, start=-1)
    with pytest.raises(TypeError, match="start"):
        ropesim.rotation_table("single:g=1", "r1", "fp16", 4, start=None)
    with pytest.raises(ValueError, match="NUL"):
        ropesim.rotation_table("single:g=1\x00junk", "r1", "fp16", 4)
    cos, _ = ropesim.rotation_table("single:g=1", "r1", "fp16", np.int64(3))
    assert cos.shape == (3, 1)


def test_formats_with_integers_beyond_binary64_keep_them_exact():
    table = ropesim.formats("p=53,e=15")
    n_max = table["n_max"][0] if hasattr(table, "columns") else table[0]["n_max"]
    assert n_max == 2 ** 16434


def test_flag_bits_are_numeric_flags_hpp():
    # numeric/flags.hpp: overflow = 1, invalid = 2, division_by_zero = 4, underflow = 8,
    # inexact = 16; the extension's docstring and round_flags read them from there.
    assert dict(ropesim._ropesim.flag_bits) == {"overflow": 1, "invalid": 2,
                                                "division_by_zero": 4, "underflow": 8,
                                                "inexact": 16}
    assert "1 overflow, 2 invalid, 4 division-by-zero, 8 underflow, 16 inexact" in \
        ropesim._ropesim.round_values.__doc__
    # 1e6 > 65520 overflows fp16 (bit 1) and is inexact (bit 16); a conversion of a number
    # raises no invalid (bit 2).
    flags = ropesim.round_flags([1e6], "fp16")
    assert flags["overflow"][0] and flags["inexact"][0] and not flags["invalid"][0]


# Issue 36: every function calls the libraries; numbers are typed by the C++ side, not by keys.
def test_text_that_looks_numeric_stays_text(ropesim_binary):
    # Over the alphabet {0, 1}, (01)* has the minimal DFA 0 -0-> 1 -1-> 0 (plus a sink): a
    # 2-cycle, so not LTL[P] (THEORY §5). Its regex, alphabet and witness words are digits, text
    # in C++: they stay str, as the CLI prints them.
    got = ropesim.classify(alphabet="01", regex="(01)*")
    cli = cli_json(ropesim_binary, "classify", "--alphabet", "01", "--regex", "(01)*", "--json")
    assert got == cli  # no text became a number: every value as JSON types it
    assert got["source"]["text"] == "(01)*" and got["class"] != "LTL[P]"
    assert got["minimal_dfa"]["alphabet"] == ["0", "1"]
    # horizon's C_source says where C came from: a record distance ("record n = ...") or a
    # power of two, spelled "2^12". It is text whatever it spells (a key-name guess made it the
    # int 4096 here and left it a str for a record), and C itself is the number 4096.
    got = ropesim.horizon(k=2, format="fp16")
    cli = cli_json(ropesim_binary, "horizon", "--k", "2", "--format", "fp16", "--json", "--quiet")
    assert got["C_source"] == cli["C_source"] == "2^12" and got["C"] == 4096
    assert [c["source"] for c in got["candidates"]] == [c["source"] for c in cli["candidates"]]


def test_exact_values_beyond_binary64_are_fractions():
    # p=64, e=15: emin = 2 - 2^14 = -16382, so the least subnormal is 2^(emin - 63) = 2^-16445,
    # far below binary64 (the CLI prints 40 digits of it); the module gives the exact value.
    table = ropesim.formats("p=64,e=15")
    row = table.iloc[0] if hasattr(table, "iloc") else table[0]
    assert isinstance(row["min_positive"], Fraction)
    assert row["min_positive"] == Fraction(1, 2 ** 16445)
    # max = (2 - 2^-63)·2^16383, an integer: an int, exactly
    assert row["max"] == (2 ** 64 - 1) * 2 ** (16383 - 63)
    # an exact value binary64 holds is a float: fp16's unit roundoff 2^-11
    fp16 = ropesim.formats("fp16")
    assert (fp16.iloc[0] if hasattr(fp16, "iloc") else fp16[0])["unit_roundoff"] == 2.0 ** -11
    # the compiler's constants are exact values (proofs/compiler/component.hpp): f1 = 1/4, f2 = 1/2 of
    # the P heads' re-binarisation (THEORY §7 C1), as numbers
    report = ropesim.compile("P a", alphabet="ab", format="fp16").report
    constants = [g["constants"] for layer in report["layers"] for g in layer["ffn"]
                 if g["kind"] == "rebinarise"]
    assert constants and constants[0]["f1"] == 0.25 and constants[0]["f2"] == 0.5


def test_errors_are_the_cli_one_line_messages(ropesim_binary):
    cases = [
        (lambda: ropesim.formats("bf17"), ["formats", "--formats", "bf17", "--json"]),
        (lambda: ropesim.formats("x" * 200), ["formats", "--formats", "x" * 200, "--json"]),
        (lambda: ropesim.horizon(k=0, g=1), ["horizon", "--g", "1", "--k", "0", "--json"]),
        (lambda: ropesim.classify(alphabet="ab", regex="(a"),
         ["classify", "--alphabet", "ab", "--regex", "(a", "--json"]),
        (lambda: ropesim.compile("Y (", alphabet="ab"),
         ["compile", "Y (", "--alphabet", "ab", "--format", "fp16", "--json"]),
        (lambda: ropesim.position("llama2-7b", 3, realization="r9"),
         ["rotations", "--schedule", "llama2-7b", "--realization", "r9", "--position", "3"]),
        (lambda: ropesim.experiment_length("Y a", lengths="5..3"),
         ["experiment", "length", "Y a", "--lengths", "5..3", "--json"]),
    ]
    for call, args in cases:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == cli_error(ropesim_binary, *args)
    assert "(200 characters)" in cli_error(ropesim_binary, *cases[1][1])  # shortened, one line


def test_cli_runs_the_executable(ropesim_binary):
    assert json.loads(ropesim.cli("formats", "--formats", "fp16", "--json"))[0]["p"] == 11
    with pytest.raises(ValueError, match="bf17"):
        ropesim.cli("formats", "--formats", "bf17")


# The flip model of tests/proofs/test_head_analysis.cpp: one NoPE head averaging "is a" over
# BOS and the symbols, y = mean − 0.3333. bf16 rounds 0.3333 to 171/512 = rnd(1/3), so a mean of
# 1/3 ("ab", "babba") gives y = 0 (reject) in bf16 and y = rnd32(1/3) − rnd32(0.3333) > 0
# (accept) in fp32. "babba" first flips at its prefix "ba" (2 symbols, mean 1/3).
FLIP_SPEC = {
    "ropesim_model": 1, "policy": {"format": "bf16"}, "d_model": 2, "alphabet": ["a", "b"],
    "embedding": {"bos": [0, 0], "eos": [0, 0], "symbols": {"a": [1, 0], "b": [0, 0]}},
    "layers": [{"heads": [{"head_dim": 1, "value_dim": 1, "value": [[1, 0]],
                           "output": [[0], [1]]}]}],
    "classifier": {"weights": [0, 1], "bias": "-0.3333"}}


def test_analyse_heads_flips_and_the_compiled_offset_head(tmp_path, ropesim_binary):
    path = tmp_path / "flip.json"
    path.write_text(json.dumps(FLIP_SPEC))
    result = ropesim.analyse_heads(str(path), words=["babba", "bab", "ab"])
    assert [f["word"] for f in result["flips"]] == ["babba", "ab"]
    flip = result["flips"][0]
    assert flip["first_prefix"] == 2 and flip["accept"] is False and flip["reference_accept"]
    # exact values by type: bf16's y = 0 exactly (an int), fp32's y = rnd32(1/3) − rnd32(0.3333)
    third, bias = Fraction(11184811, 2**25), Fraction(np.float32(0.3333).item())
    assert flip["output_exact"] == 0 and type(flip["output_exact"]) is int
    assert flip["reference_output_exact"] == third - bias
    assert result["heads"][0]["positional"] is False and result["heads"][0]["offset"] is None
    # the same dict as the CLI prints, exact texts as numbers
    cli = cli_json(ropesim_binary, "analyse", "heads", str(path), "--words", "babba,bab,ab",
                   "--json")
    assert same_as_cli(result, cli)
    # a compiled Y^1 head: positional at k = 1, its range that of ropesim.horizon at the C the
    # compiler chose (the candidate algorithm, not analyse's scan)
    model = ropesim.compile("Y a", format="bf16")
    C = model.report["bounded_heads"][0]["C"]
    horizon = ropesim.horizon(k=1, g="1", C=str(C), format="bf16")
    heads = ropesim.analyse_heads(model, lengths="1..5")["heads"]
    y = heads[1]
    assert y["positional"] and y["offset"] == 1 and y["at_offset"] == y["eligible"]
    assert y["certified_range"]["n_max"] == horizon["n_max"] == 43
    assert y["certified_range"]["fail_query"] == horizon["fail_query"]
    with pytest.raises(ValueError, match="--words: give either"):
        ropesim.analyse_heads(model, words="ab", lengths="1..2")
    with pytest.raises(ValueError, match="contains a comma"):
        ropesim.analyse_heads(model, words=["a,b"])
    with pytest.raises(TypeError):
        ropesim.analyse_heads(model, per_length=1.5)
