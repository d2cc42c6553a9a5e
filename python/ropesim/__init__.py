"""ropesim from Python: exact finite-precision RoPE transformers (docs/PYTHON.md).

Every function runs ropesim's C++ libraries in this process (the extension ``ropesim._ropesim``);
nothing is computed a second time in Python.

* ``round``, ``round_flags`` and ``rotation_table`` call the libraries directly and return numpy
  arrays (float64; every value is the element of F exactly, for formats that fit a binary64).
* ``census`` calls attention::census directly and returns the dict ``ropesim rotations --json``
  prints (each value by its JSON type);
* ``position``, ``horizon``, ``compile`` (with ``Model.run`` / ``Model.trace``),
  ``classify``, ``formats`` and ``experiment_length`` run the matching ``ropesim`` command
  in-process with ``--json`` and return its JSON as Python objects with the same keys;
  ``check`` runs the ``ropesim`` executable (RapidCheck cannot be linked into the extension).

Numbers: a JSON number is an ``int`` (integer text) or the ``float`` it spells (the CLI prints
a binary64 as the shortest decimal that reads back as it); a string of decimal digits (the
CLI's exact values, e.g. ``"f_large": "17.34375"``) is a ``float`` when binary64 holds it
exactly and a ``fractions.Fraction`` (the exact value) otherwise; ``"P/Q"`` is a ``Fraction`` and ``"2^k"``
an ``int`` (or a ``Fraction`` for k < 0). Text fields (names, formulas, words, the alphabet,
provenance) stay strings. Where the CLI prints a table, the rows come as a ``pandas.DataFrame``
when pandas imports (a list of dicts otherwise).

Bad input raises ``ValueError`` with the CLI's one-line message (without the ``ropesim: error:``
prefix). The GIL is released while C++ computes. ``jobs=`` is the CLI's ``--jobs`` (0: every
core).
"""
from __future__ import annotations

import json as _json
import os as _os
import re as _re
import tempfile as _tempfile
from fractions import Fraction

import numpy as _np

from . import _ropesim
from ._sweep import sweep  # the sweep table from the library (python/ropesim/_sweep.py)

__all__ = [
    "round", "round_flags", "rotation_table", "census", "position", "horizon", "compile",
    "Model", "classify", "check", "formats", "experiment_length", "cli", "Fraction",
    "__version__", "sweep",
]
__version__ = _ropesim.version

# Keys whose string values are text even when they look like numbers (a word "0101", an
# alphabet "01", a commit made of digits).
_TEXT_KEYS = frozenset({
    "alphabet", "command", "commit", "formula", "input", "name", "output", "prefix", "regex",
    "replay", "tool", "version", "word", "words", "witness", "schedule", "realization",
    "format", "table_format", "rounding", "engine", "out", "property", "symbol", "token",
    "spec", "text", "expression", "exact_angle_text", "attention_factor_text", "hex",
})
_DECIMAL = _re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_RATIO = _re.compile(r"-?\d+/\d+")
_POWER = _re.compile(r"(-?)2\^(-?\d+)")


def _decimal(text: str):
    """The exact value of decimal `text`: float if binary64 holds it exactly, else Fraction."""
    exact = Fraction(text)
    try:
        approx = float(text)
    except OverflowError:  # pragma: no cover - float() of a decimal returns inf, not raise
        return exact
    if approx == approx and abs(approx) != float("inf") and Fraction(approx) == exact:
        return approx
    return exact


def _number_text(text: str):
    """`text` as a Python number if it spells one (see the module docstring), else None."""
    if _DECIMAL.fullmatch(text):
        if _re.fullmatch(r"-?\d+", text):
            return int(text)
        return _decimal(text)
    if _RATIO.fullmatch(text):
        return Fraction(text)
    m = _POWER.fullmatch(text)
    if m and abs(int(m.group(2))) <= 100000:
        value = Fraction(2) ** int(m.group(2))
        value = -value if m.group(1) else value
        return int(value) if value.denominator == 1 else value
    return None


def _numbers(obj, key=None):
    """Converts the exact decimal strings of a CLI JSON value into Python numbers."""
    if isinstance(obj, dict):
        return {k: _numbers(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_numbers(v, key) for v in obj]
    if isinstance(obj, str) and key not in _TEXT_KEYS and key != "provenance":
        value = _number_text(obj)
        return obj if value is None else value
    return obj


def _loads(text: str):
    """JSON text as Python objects: JSON numbers as int/float (the CLI prints a JSON number
    only for a binary64, as the shortest decimal that reads back as it), exact decimal strings
    as float or Fraction (_numbers)."""
    return _numbers(_json.loads(text))


def _frame(rows):
    """A pandas.DataFrame of `rows` (a list of dicts) when pandas imports, else the list."""
    try:
        import pandas
    except ImportError:  # pragma: no cover - pandas is installed by scripts/setup
        return rows
    try:
        return pandas.DataFrame(rows)
    except OverflowError:  # an exact integer beyond binary64 (n_max = 2^16434): kept exact
        return pandas.DataFrame(rows, dtype=object)


def _arguments(args) -> list:
    """The command-line words of `args`: str, int and Fraction/float values as text.

    Raises TypeError for None, bool and other types (``m.run(None)`` ran the word "None"), and
    ValueError for text with a NUL character (the command line would cut it there:
    ``compile("P a\\x00 & bogus")`` compiled ``P a``). The flag before a value names it.
    """
    words = []
    for i, a in enumerate(args):
        what = f"the value of {args[i - 1]}" if i > 0 and str(args[i - 1]).startswith("--") \
            else f"argument {i + 1}"
        if isinstance(a, bool) or a is None or not isinstance(a, (str, int, float, Fraction)):
            raise TypeError(f"{what}: expected a str or a number, got {type(a).__name__}")
        text = str(a)
        if "\x00" in text:
            raise ValueError(f"{what}: contains a NUL character, which no argument can hold")
        words.append(text)
    return words


def _count(name: str, value, minimum: int) -> int:
    """`value` as an int >= `minimum`: TypeError for anything but an int (None, 1.5, True),
    ValueError below `minimum` (with the accepted range)."""
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}, got {value}")
    return int(value)


def cli(*args: str) -> str:
    """Runs ``ropesim ARGS...`` in this process and returns what it prints on stdout.

    Raises ValueError with the CLI's one-line message when it exits with 2 (bad input), and
    RuntimeError on any other non-zero exit. Every other function of the module is built on it
    or on the C++ library directly.
    """
    code, out, err = _ropesim.run_cli(_arguments(args))
    if code == 0:
        return out
    message = err.strip().splitlines()[-1] if err.strip() else f"exit code {code}"
    for prefix in ("ropesim: error: ", "ropesim: internal error: "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    if code == 2:
        raise ValueError(message)
    raise RuntimeError(f"ropesim {' '.join(map(str, args))}: exit code {code}: {message}")


def _json_command(*args) -> object:
    return _loads(cli(*args))


def _options(**flags) -> list:
    """--flag VALUE for every flag whose value is not None (True: a bare --flag)."""
    out = []
    for name, value in flags.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


def round(values, format: str, rounding: str = "nearest-even") -> _np.ndarray:
    """Each value rounded into the format F, as a float64 numpy array of the input's shape.

    `values`: anything numpy converts to float64 (a scalar, list or array); each binary64 is
    rounded once, correctly, into F (THEORY §1; numeric::Arithmetic::convert), with F's
    subnormals, signed zeros, infinities, NaN and saturation. Exact for every format up to fp64
    (the result is the element of F itself). `format`: any spelling ``ropesim formats``
    accepts (``bf16``, ``fp16``, ``p=11,e=5``, ``torch.bfloat16``…). `rounding`: nearest-even,
    nearest-away, toward-zero, upward, downward. Raises ValueError for a bad format or rounding.
    Example: ``round([0.1], "bf16")`` is ``array([0.10009765625])``.
    """
    rounded, _ = _ropesim.round_values(_values(values), format, rounding)
    return rounded


def _values(values) -> _np.ndarray:
    """`values` as a float64 array; TypeError for None (numpy would read it as NaN) and for
    text (round numbers, not their spellings)."""
    if values is None or isinstance(values, (str, bytes)):
        raise TypeError(f"values: expected numbers (a scalar, list or array), got "
                        f"{type(values).__name__}")
    return _np.asarray(values, dtype=_np.float64)


# (name, bit) of each IEEE flag, from numeric/flags.hpp through the extension.
_FLAG_NAMES = tuple((name, bit) for name, bit in _ropesim.flag_bits)


def round_flags(values, format: str, rounding: str = "nearest-even") -> dict:
    """``round`` with the IEEE 754 exception flags of each element (IEEE 754-2019 §7).

    Returns a dict: ``"value"`` the rounded float64 array, and ``"invalid"``,
    ``"division_by_zero"``, ``"overflow"``, ``"underflow"`` (tininess after rounding),
    ``"inexact"``: bool arrays of the input's shape. Raises ValueError like ``round``.
    """
    rounded, bits = _ropesim.round_values(_values(values), format, rounding)
    out = {"value": rounded}
    for name, bit in _FLAG_NAMES:
        out[name] = (bits & bit) != 0
    return out


def rotation_table(schedule: str, realization: str, format: str, positions: int,
                   start: int = 0, rounding: str = "nearest-even", engine: str = "auto",
                   jobs: int = 0, flags: bool = False):
    """The realised rotation table: ``(cos, sin)``, float64 arrays of shape (positions, blocks).

    Row k is position ``start + k`` (0-based, BOS = 0), column d the rotary block d (THEORY §3):
    the realised cos and sin of R̂_i in the realisation's table format, bit for bit (the values
    the census compares; attention::realised_table). `schedule`: a preset (``llama2-7b``) or a
    spec (``conventional:base=10000,dim=128``, ``hf-config:PATH``); `realization`: whatever
    the realisation parser accepts (``r1``, ``r2``, ``r3``, ``hf``, framework presets,
    ``pipeline:...``); `format`: F for r1–r3, the activation format for pipelines. With
    ``flags=True`` also a (positions,) uint8 array: bit 1 overflow, bit 2 NaN at that position.
    Raises TypeError when `positions`, `start` or `jobs` is not an int (None, 1.5) or a text
    argument is not a str, ValueError for positions < 1 or a negative start (as the CLI), and
    ValueError for bad input, a realisation that does not apply, a table format a
    binary64 cannot hold, or a table beyond the memory budget (8 GiB; 17 bytes per
    (position, block)). Example: ``rotation_table("llama2-7b", "r2", "bf16", 65536)`` has 1281
    distinct rows, the census' ``distinct``.
    """
    positions, start = _count("positions", positions, 1), _count("start", start, 0)
    jobs = _count("jobs", jobs, 0)
    for name, text in (("schedule", schedule), ("realization", realization), ("format", format),
                       ("rounding", rounding), ("engine", engine)):
        _arguments(["--" + name, text])
    cos, sin, position_flags = _ropesim.rotation_table(
        schedule, realization, format, positions, start, rounding, engine, jobs)
    return (cos, sin, position_flags) if flags else (cos, sin)


def census(schedule: str, realization: str = "r1", format: str = "fp32",
           positions: int = 65536, start: int = 0, rounding: str = "nearest-even",
           engine: str = "auto", max_period: int | None = None, witnesses: bool = False,
           axis: str | None = None, at: str | None = None, jobs: int = 0,
           allow_slow: bool = False) -> dict:
    """The rotation census of ``ropesim rotations --json`` (THEORY §3): a dict with its keys.

    Over positions start..start+positions-1: ``distinct`` realised rotations,
    ``largest_class``, ``distinct_per_block``, ``period_per_block``, ``first_repeat``
    ([i, j] or None), ``periodic``, ``period``, witnesses (``witnesses=True``: the list for
    every P), overflow/NaN counts, and ``fast_path``: what the realisation fast path did
    (``evaluations``, ``fallbacks``, ``exact_cases``, ``exact_only``, ints; independent of
    `jobs`). Calls attention::census directly (no command line). Raises ValueError with the
    CLI's one-line message for bad input (N below 2, P_max outside 1..N-1, ...), TypeError for
    a count that is not an int.
    """
    positions, start, jobs = (_count("positions", positions, 0), _count("start", start, 0),
                              _count("jobs", jobs, 0))
    if max_period is not None:
        max_period = _count("max_period", max_period, 0)
    for name, text in (("schedule", schedule), ("realization", realization), ("format", format),
                       ("rounding", rounding), ("engine", engine), ("axis", axis), ("at", at)):
        if text is not None:
            _arguments(["--" + name, text])
    realised = _ropesim.RealisationArguments(schedule, realization, format, rounding, engine)
    return _ropesim.census(realised, positions, start, max_period, bool(witnesses), axis, at,
                           jobs, bool(allow_slow))


def position(schedule: str, position, realization: str = "r1", format: str = "fp32",
             rounding: str = "nearest-even", engine: str = "auto") -> dict:
    """``ropesim rotations --position I --json``: the realised rotation at one position.

    Per block (``"blocks"``, also as a DataFrame under ``"table"``): the exact angle, cos and
    sin next to the realised ones and the error in ulps (NUMERIC §4). Each realised value
    (``"cos"``, ``"sin"``, every step) is a dict: ``"value"`` (float, exact for formats up to
    fp64; beside it ``"value_exact"``, a Fraction, for wider formats), ``"decimal"`` (17
    digits, as a number) and ``"hex"`` (text). `position`: an integer or a tuple for
    multi-axis schedules. Raises ValueError for bad input.
    """
    if isinstance(position, (tuple, list)):
        position = "(" + ",".join(str(p) for p in position) + ")"
    out = _json_command("rotations", "--schedule", schedule, "--realization", realization,
                        "--format", format, "--rounding", rounding, "--engine", engine,
                        "--position", position, "--json")
    if isinstance(out, dict) and isinstance(out.get("blocks"), list):
        out["table"] = _frame(out["blocks"])
    return out


def horizon(k: int = 1, format: str = "fp16", g=None, schedule: str | None = None,
            C="auto", realization: str = "r1", rounding: str = "nearest-even",
            algorithm: str = "auto", max_length: int | None = None, jobs: int = 0,
            allow_slow: bool = False) -> dict:
    """The certified look-back range of the Y^k head (``ropesim horizon --json``; THEORY §6).

    Give `g` (frequency in radians per position: a number, exact decimal string or "P/Q") or
    `schedule`. Returns the CLI's dict: the certified range N_max^(k), the scale C, margins and
    the papers' bounds next to it. Exact values are numbers; where a float cannot hold one the
    exact value is beside it as a Fraction under ``KEY_exact`` (``g=0.1``: ``"g"`` 0.1 and
    ``"g_exact"`` Fraction(1, 10)). Raises ValueError for bad input.
    """
    if g is None and schedule is None:
        g = 1
    args = ["horizon", "--k", k, "--C", C, "--format", format, "--realization", realization,
            "--rounding", rounding, "--algorithm", algorithm, "--jobs", jobs, "--json",
            "--quiet"]
    args += _options(g=g, schedule=schedule, max_length=max_length, allow_slow=allow_slow)
    return _json_command(*args)


class Model:
    """A compiled F-transformer (``compile``): run it on words.

    Attributes: ``report`` (the compiler's report, ``ropesim compile --json``), ``spec`` (the
    model spec, docs/MODEL_SPEC.md, as a dict), ``formula``, ``alphabet``, ``format``.
    """

    def __init__(self, formula, alphabet, format, report, spec_text):
        self.formula, self.alphabet, self.format = formula, alphabet, format
        self.report = report
        self._dir = _tempfile.TemporaryDirectory(prefix="ropesim-model-")
        self.path = _os.path.join(self._dir.name, "model.json")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(spec_text)
        self.spec = _json.loads(spec_text)

    def run(self, word: str) -> dict:
        """``ropesim run MODEL --input WORD --json``: the model's output on `word` (a dict).

        Raises ValueError for a symbol outside the alphabet.
        """
        return _json_command("run", self.path, "--input", word, "--json")

    def trace(self, word: str) -> dict:
        """``ropesim run MODEL --input WORD --trace --json``: every layer's values per position."""
        return _json_command("run", self.path, "--input", word, "--trace", "--json")

    def save(self, path: str) -> None:
        """Writes the model spec to `path` (``ropesim run PATH`` runs it)."""
        with open(self.path, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as g:
            g.write(f.read())

    def __repr__(self):
        return f"ropesim.Model({self.formula!r}, alphabet={self.alphabet!r}, format={self.format!r})"


def compile(formula: str, alphabet: str = "ab", format: str = "fp16",
            schedule: str | None = None, rounding: str = "nearest-even",
            layer_norm: bool = False, allow_slow: bool = False) -> Model:
    """Compiles an LTL[P,MOD] formula into an F-transformer (``ropesim compile``; THEORY §7).

    `schedule`: the RoPE schedule of every rotary head (``compile --schedule``): the Y^k heads
    use all its blocks; MOD atoms keep their periodic tables under a periodic schedule and are
    built on its block nearest a turn 2πa/m otherwise, exact only up to their certified range
    N_max^MOD (THEORY §7 C4'), or refused. None: single:g=1 for Y^k, periodic tables for MOD.
    Returns a ``Model`` with ``.run(word)`` and ``.trace(word)``. Raises ValueError with the
    CLI's message when the formula does not parse or F cannot realise a construction (e.g.
    ``compile("mod(2,0)", schedule="llama2-7b")``: no bounded MOD_2 on llama2-7b's angles).
    """
    with _tempfile.TemporaryDirectory(prefix="ropesim-compile-") as d:
        path = _os.path.join(d, "model.json")
        args = ["compile", formula, "--alphabet", alphabet, "--format", format, "--rounding",
                rounding, "--json", "--no-progress", "-o", path]
        args += _options(schedule=schedule, layer_norm=layer_norm, allow_slow=allow_slow)
        report = _json_command(*args)
        with open(path, encoding="utf-8") as f:
            spec_text = f.read()
    return Model(formula, alphabet, format, report, spec_text)


def classify(alphabet: str = "ab", regex: str | None = None, formula: str | None = None,
             dfa: str | None = None, model: "Model | str | None" = None,
             allow_slow: bool = False) -> dict:
    """Decides LTL[P] / LTL[P,MOD] / neither (``ropesim classify --json``; THEORY §5).

    Give one of `regex`, `formula`, `dfa` (a file path) or `model` (a Model or a spec path).
    Returns the CLI's dict (the class, witnesses, an equivalent formula for LTL[P]).
    """
    if isinstance(model, Model):
        model = model.path
    args = ["classify", "--alphabet", alphabet, "--json"]
    args += _options(regex=regex, formula=formula, dfa=dfa, model=model, allow_slow=allow_slow)
    return _json_command(*args)


def _executable() -> str:
    """The ``ropesim`` executable: $ROPESIM_BINARY, the build tree's (build/python/../ropesim),
    or ``ropesim`` on PATH. Raises RuntimeError if none exists."""
    import shutil
    here = _os.path.dirname(_os.path.abspath(__file__))
    for path in (_os.environ.get("ROPESIM_BINARY"),
                 _os.path.join(here, "..", "..", "ropesim"), shutil.which("ropesim")):
        if path and _os.path.isfile(path) and _os.access(path, _os.X_OK):
            return path
    raise RuntimeError("ropesim.check needs the ropesim executable: set ROPESIM_BINARY")


def check(property: str = "all", trials: int = 100, seed: int | None = None,
          max_length: int | None = None, format: str | None = None) -> dict:
    """Runs the theorems as RapidCheck properties (``ropesim check --json``; THEORY §5).

    Returns the CLI's dict; its list of per-property objects is also given as a DataFrame
    under ``"table"``. A failing property is reported in the dict (exit code 1), not raised.
    Unlike the other functions this one runs the ``ropesim`` executable in a child process
    (``_executable()``): Debian's RapidCheck is a static library that a Python extension cannot
    link. Raises ValueError with the CLI's message for bad input.
    """
    import subprocess
    args = ["check", "--property", property, "--trials", trials, "--json", "--quiet"]
    args += _options(seed=seed, max_length=max_length, format=format)
    r = subprocess.run([_executable(), *map(str, args)], capture_output=True, text=True)
    if r.returncode == 2:
        message = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit code 2"
        raise ValueError(message.removeprefix("ropesim: error: "))
    if r.returncode not in (0, 1) or not r.stdout.strip():
        raise RuntimeError(f"ropesim check: exit code {r.returncode}: {r.stderr.strip()}")
    result = _loads(r.stdout)
    if isinstance(result, dict):
        for key in ("properties", "results"):
            if isinstance(result.get(key), list):
                result["table"] = _frame(result[key])
    return result


def formats(formats: str | None = None, rounding: str = "nearest-even"):
    """The formats table (``ropesim formats --json``; THEORY §1) as a DataFrame.

    One row per format: name, p, emin, emax, max, min_positive, unit_roundoff, f_large, n_max,
    subnormals, overflow, rounding (numbers exact as the module docstring says). `formats`: a
    list such as ``"bf16,fp16"`` or ``"p=4..8,e=5"``; default every preset.
    """
    args = ["formats", "--json", "--rounding", rounding]
    args += _options(formats=formats)
    return _frame(_json_command(*args))


def experiment_length(formula: str, alphabet: str = "ab", lengths: str = "1..64",
                      schedules=None, formats=None, words: int = 20, seed: int = 1,
                      rounding: str = "nearest-even", adversarial: int = 2,
                      allow_slow: bool = False) -> dict:
    """Accuracy of the compiled model against word length (``ropesim experiment length --json``).

    Per length, `words` members and `words` non-members of the formula's language drawn
    uniformly by exact path counts in its minimal DFA (every word of a side with at most `words`
    words; none of a side that is empty at that length), plus `adversarial` offset-aliasing
    words for Y^k heads; docs/CLI.md gives the draw. `schedules`, `formats`: a name or a list of
    names (one series each). Returns the CLI's dict: ``series`` (certified_length,
    longest_all_right: every word right) and ``rows`` with balanced_accuracy,
    accuracy_members, accuracy_nonmembers (None where that side is empty), accuracy (every word
    tried), the counts and the empty/exhaustive flags; the rows also as a DataFrame under
    ``"table"``. Raises ValueError with the CLI's one-line message on bad input.
    """
    args = ["experiment", "length", formula, "--alphabet", alphabet, "--lengths", lengths,
            "--words", words, "--seed", seed, "--rounding", rounding,
            "--adversarial", adversarial, "--json"]
    for flag, values in (("--schedule", schedules), ("--format", formats)):
        if values is None:
            continue
        for v in [values] if isinstance(values, str) else values:
            args += [flag, v]
    args += _options(allow_slow=allow_slow)
    result = _json_command(*args)
    if isinstance(result, dict) and isinstance(result.get("rows"), list):
        result["table"] = _frame(result["rows"])
    return result
