"""ropesim from Python: exact finite-precision RoPE transformers (docs/PYTHON.md).

Every function but ``cli`` calls ropesim's C++ libraries in this process (the
extension ``ropesim._ropesim``, pybind11); nothing is computed a second time in Python and no
command line is run:

* ``round``, ``round_flags`` and ``rotation_table`` return numpy arrays (float64; every value is
  the element of F exactly, for formats that fit a binary64);
* ``census``, ``position``, ``horizon``, ``compile`` (with ``Model.run`` / ``Model.trace``),
  ``classify``, ``analyse_heads``, ``formats`` and ``experiment_length`` return what the matching ``ropesim``
  command prints with ``--json``, built by the same library functions (each library's
  ``to_json``), as Python objects with the same keys;
* ``sweep``, ``table_horizon`` and ``table_bounds`` return the rows of ``ropesim sweep``,
  ``ropesim table horizon`` and ``ropesim table bounds`` as DataFrames (and write their
  ``--out`` files); ``ropesim.dask`` runs them, ``check`` and ``experiment_length`` on a Dask
  cluster, one task per shard (docs/SCALE.md);
* ``check`` runs the theorems' RapidCheck properties (properties/, with RapidCheck compiled
  with -fPIC from third_party/rapidcheck: Debian's static library cannot be linked into an
  extension) and returns the dict ``ropesim check --json`` prints;
* ``cli`` runs the ``ropesim`` executable in a child process: it is the command line itself.

Numbers, by their C++ type (never by a key's name): a binary64 is a ``float``, an integer an
``int``; an exact value that JSON cannot hold as a number (the libraries write it as text:
``"P/Q"``, ``"2^k"``, an exact decimal, the ``KEY_exact`` beside a float) is an ``int`` when it
is an integer, a ``float`` when binary64 holds it exactly and a ``fractions.Fraction`` (the
exact value) otherwise; a decimal rounded for display (a realised value's 17-digit
``"decimal"``) is the ``float`` it reads as. Text (names, formulas, words, the alphabet, hex)
stays ``str`` even when it looks like a number (a word ``"0101"``). Where the CLI prints a
table, the rows come as a ``pandas.DataFrame`` when pandas imports (a list of dicts otherwise).

Bad input raises ``ValueError`` with the CLI's one-line message (without the ``ropesim: error:``
prefix). The GIL is released while C++ computes. ``jobs=`` is the CLI's ``--jobs`` (0: every
core).
"""
from __future__ import annotations

import json as _json
import os as _os
import shutil as _shutil
import tempfile as _tempfile
import warnings as _warnings
import weakref as _weakref
from fractions import Fraction

import numpy as _np

from . import _ropesim
from . import _sweep as _sweep_module
from ._sweep import sweep  # the sweep table from the library (python/ropesim/_sweep.py)
from ._tables import table_bounds, table_horizon  # python/ropesim/_tables.py

__all__ = [
    "round", "round_flags", "rotation_table", "census", "position", "horizon", "compile",
    "Model", "CertificationWarning", "classify", "analyse_heads", "check", "formats",
    "experiment_length",
    "balanced_words", "cli", "Fraction", "__version__", "sweep", "table_horizon", "table_bounds",
]
__version__ = _ropesim.version

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


# The largest count the extension takes (a uint64 in C++), and the CLI's cap on --jobs
# (cli/jobs.cpp: 0..256).
_UINT64_MAX = 2**64 - 1
_MAX_JOBS = _sweep_module.MAX_JOBS


def _count(name: str, value, minimum: int, maximum: int = _UINT64_MAX) -> int:
    """`value` as an int in `minimum`..`maximum`: TypeError for anything but an int (None, 1.5,
    True), ValueError below `minimum` or above `maximum` (with the accepted range), so that
    ``positions=2**64`` is one line naming the argument, not pybind's list of signatures."""
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}, got {value}")
    if value > maximum:
        raise ValueError(f"{name}: {value} is out of range; accepted: an integer in "
                         f"{minimum}..{maximum}")
    return int(value)


def _jobs(value) -> int:
    """`jobs` as the CLI's --jobs takes it: an int in 0..256 (0: every core)."""
    return _count("jobs", value, 0, _MAX_JOBS)


def _text(name: str, value) -> str:
    """`value` as a str argument: TypeError naming `name` for None or another type."""
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, got {type(value).__name__} {value!r}")
    return value


def cli(*args: str) -> str:
    """Runs the ``ropesim`` executable with ARGS in a child process and returns its stdout.

    The one function of the module that runs the command line (every other one calls the
    libraries): the executable is
    ``$ROPESIM_BINARY``, else build/ropesim next to build/python/, else ``ropesim`` on PATH.
    Raises ValueError with the CLI's one-line message (without ``ropesim: error:``) when it
    exits with 2 (bad input), RuntimeError on any other non-zero exit or when no executable is
    found, TypeError/ValueError for an argument that is not text or a number, or holds a NUL.
    """
    import subprocess
    words = _arguments(args)
    r = subprocess.run([_executable(), *words], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout
    message = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit code {r.returncode}"
    for prefix in ("ropesim: error: ", "ropesim: internal error: "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    if r.returncode == 2:
        raise ValueError(message)
    raise RuntimeError(f"ropesim {' '.join(words)}: exit code {r.returncode}: {message}")


def round(values, format: str, rounding: str = "nearest-even") -> _np.ndarray:
    """Each value rounded into the format F, as a float64 numpy array of the input's shape.

    `values`: anything numpy converts to float64 (a scalar, list or array); each binary64 is
    rounded once, correctly, into F (THEORY §1; numeric::Arithmetic::convert), with F's
    subnormals, signed zeros, infinities, NaN and saturation. Exact for every format up to fp64
    (the result is the element of F itself). `format`: any spelling ``ropesim formats``
    accepts (``bf16``, ``fp16``, ``p=11,e=5``, ``torch.bfloat16``…). `rounding`: nearest-even,
    nearest-away, toward-zero, upward, downward. Raises ValueError for a bad format or rounding
    and for a number beyond binary64 (``2**1100``), TypeError for None or text anywhere in
    `values` (``None``, ``[None, 1.0]``, ``"0.1"``, ``["0.1"]``: numbers, not their spellings)
    and for a `format` or `rounding` that is not a str.
    Example: ``round([0.1], "bf16")`` is ``array([0.10009765625])``.
    """
    rounded, _ = _round_values(values, format, rounding)
    return rounded


def _round_values(values, format, rounding):
    """The extension's round_values after checking the arguments' types (one TypeError line
    naming the argument, not pybind's list of signatures)."""
    array = _values(values)
    texts = _arguments(["--format", _text("format", format), "--rounding",
                        _text("rounding", rounding)])
    return _ropesim.round_values(array, texts[1], texts[3])


def _values(values) -> _np.ndarray:
    """`values` as a float64 array (each number read as the binary64 numpy reads it as).

    Raises TypeError for None anywhere in `values` (a scalar, a list, an object array: numpy
    would read it as NaN) and for text anywhere (``"0.1"`` and ``["0.1"]`` alike: `round`
    rounds numbers, not their spellings; docs/PYTHON.md "Errors"), ValueError for a number
    beyond binary64 (``2**1100``: `round` rounds binary64 values, and no binary64 holds it).
    """
    expected = "expected numbers (a scalar, list or array of int or float)"
    if values is None:
        raise TypeError(f"values: None is not a number; {expected}")
    if isinstance(values, (str, bytes)):
        raise TypeError(f"values: {values!r} is text, not a number; {expected}")
    raw = values if isinstance(values, _np.ndarray) else _np.asarray(values)
    if raw.dtype.kind in "USa":
        first = raw.flat[0] if raw.size else ""
        raise TypeError(f"values: {first!r} is text, not a number; {expected}")
    if raw.dtype.kind == "O":  # None, text or ints beyond binary64 among the numbers
        out = _np.empty(raw.shape, dtype=_np.float64)
        for index, x in _np.ndenumerate(raw):
            index = index[0] if len(index) == 1 else index  # 3, or (1, 0) in a 2-d input
            if x is None:
                raise TypeError(f"values: None is not a number (at index {index}); {expected}")
            if isinstance(x, (str, bytes)):
                raise TypeError(f"values: {x!r} is text, not a number (at index {index}); "
                                f"{expected}")
            try:
                out[index] = float(x)
            except OverflowError:
                raise ValueError(f"values: {_short(x)} is beyond binary64 (largest "
                                 f"{_np.finfo(_np.float64).max!r}); round takes binary64 "
                                 f"values") from None
            except (TypeError, ValueError):
                raise TypeError(f"values: {type(x).__name__} {_short(x)} is not a number "
                                f"(at index {index}); {expected}") from None
        return out
    return raw.astype(_np.float64, copy=False)


def _short(x) -> str:
    """`x` for a message: its repr, or for a long one its start and its length."""
    text = repr(x)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


# (name, bit) of each IEEE flag, from numeric/flags.hpp through the extension.
_FLAG_NAMES = tuple((name, bit) for name, bit in _ropesim.flag_bits)


def round_flags(values, format: str, rounding: str = "nearest-even") -> dict:
    """``round`` with the IEEE 754 exception flags of each element (IEEE 754-2019 §7).

    Returns a dict: ``"value"`` the rounded float64 array, and ``"invalid"``,
    ``"division_by_zero"``, ``"overflow"``, ``"underflow"`` (tininess after rounding),
    ``"inexact"``: bool arrays of the input's shape. Raises ValueError like ``round``.
    """
    rounded, bits = _round_values(values, format, rounding)
    out = {"value": rounded}
    for name, bit in _FLAG_NAMES:
        out[name] = (bits & bit) != 0
    return out


def rotation_table(schedule: str, realization: str, format: str, positions: int,
                   start: int = 0, rounding: str = "nearest-even", engine: str = "auto",
                   jobs: int = 0, flags: bool = False, allow_slow: bool = False):
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
    (position, block); ``allow_slow=True`` lifts it, as ``table rotations --allow-slow``),
    ValueError for jobs above 256 or positions/start above 2^64 - 1. Example:
    ``rotation_table("llama2-7b", "r2", "bf16", 65536)`` has 1281 distinct rows, the census'
    ``distinct``.
    """
    positions, start = _count("positions", positions, 1), _count("start", start, 0)
    jobs = _jobs(jobs)
    for name, text in (("schedule", schedule), ("realization", realization), ("format", format),
                       ("rounding", rounding), ("engine", engine)):
        _arguments(["--" + name, text])
    cos, sin, position_flags = _ropesim.rotation_table(
        schedule, realization, format, positions, start, rounding, engine, jobs, bool(allow_slow))
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
                              _jobs(jobs))
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
    """The realised rotation at one position: the dict of ``ropesim rotations --position I
    --json`` (attention::query_position, called directly).

    Per block (``"blocks"``, also as a DataFrame under ``"table"``): the exact angle, cos and
    sin next to the realised ones and the error in ulps (NUMERIC §4). Each realised value
    (``"cos"``, ``"sin"``, every step) is a dict: ``"value"`` (float, exact for formats up to
    fp64; beside it ``"value_exact"``, a Fraction, for wider formats), ``"decimal"`` (the
    17-digit decimal the CLI prints, as the float it reads as) and ``"hex"`` (text).
    `position`: an integer or a tuple for multi-axis schedules. Raises ValueError with the
    CLI's one-line message for bad input, TypeError for a text argument that is not a str.
    """
    if isinstance(position, (tuple, list)):
        position = "(" + ",".join(str(p) for p in position) + ")"
    words = _arguments(["--schedule", schedule, "--realization", realization, "--format", format,
                        "--rounding", rounding, "--engine", engine, "--position", position])
    realised = _ropesim.RealisationArguments(*words[1:10:2])
    out = _ropesim.position(realised, words[11])
    if isinstance(out, dict) and isinstance(out.get("blocks"), list):
        out["table"] = _frame(out["blocks"])
    return out


def horizon(k: int = 1, format: str = "fp16", g=None, schedule: str | None = None,
            C="auto", realization: str = "r1", rounding: str = "nearest-even",
            algorithm: str = "auto", max_length: int | None = None, jobs: int = 0,
            allow_slow: bool = False) -> dict:
    """The certified look-back range of the Y^k head (THEORY §6): the dict of ``ropesim horizon
    --json`` (proofs::horizon, called directly; proofs::bounded_horizon for a bounded-error
    cos_sin step).

    Give `g` (frequency in radians per position: a number, exact decimal string or "P/Q"; 1
    when neither is given) or `schedule`, not both. Returns the CLI's dict: the certified range
    N_max^(k), the scale C, margins and the papers' bounds next to it. Exact values are numbers;
    where a float cannot hold one the exact value is beside it as a Fraction under
    ``KEY_exact`` (``g=0.1``: ``"g"`` 0.1 and ``"g_exact"`` Fraction(1, 10)). Raises ValueError
    with the CLI's one-line message for bad input, TypeError for a count that is not an int.
    """
    arguments = _ropesim.HorizonArguments()
    texts = _arguments(["--k", k, "--C", C, "--format", format, "--realization", realization,
                        "--rounding", rounding, "--algorithm", algorithm])
    (arguments.k, arguments.C, arguments.format, arguments.realization, arguments.rounding,
     arguments.algorithm) = texts[1::2]
    if g is not None:
        arguments.g = _arguments(["--g", g])[1]
    if schedule is not None:
        schedule = _arguments(["--schedule", schedule])[1]
    if max_length is not None:
        arguments.max_length = _count("max_length", max_length, 1)
    arguments.allow_slow = bool(allow_slow)
    return _ropesim.horizon(arguments, g is not None, schedule, _jobs(jobs))


class CertificationWarning(RuntimeWarning):
    """Issued by ``Model.run`` / ``Model.trace`` when the word is longer than the model's
    certified length (the construction's N_max, THEORY §6): past it the output is not
    certified and may be wrong, as ``ropesim run`` warns on stderr. The result says so too
    (``within_certified_length`` False). Silence or raise it with the ``warnings`` module."""


class Model:
    """A compiled F-transformer (``compile``): run it on words.

    Attributes: ``report`` (the compiler's report, the dict of ``ropesim compile --json``),
    ``spec`` (the model spec, docs/MODEL_SPEC.md, as a dict: its numbers are the spec's exact
    decimal strings, as the file holds them), ``formula``, ``alphabet``, ``format``, ``path``
    (a temporary file holding the spec, for ``classify(model=...)`` and the CLI; removed by
    ``close()``, on leaving a ``with`` block, when the Model is collected or at exit, with no
    ResourceWarning).
    """

    def __init__(self, formula, alphabet, format, report, spec_text):
        self.formula, self.alphabet, self.format = formula, alphabet, format
        self.report = report
        directory = _tempfile.mkdtemp(prefix="ropesim-model-")
        # removed explicitly (close) or by the finalizer, not by TemporaryDirectory's implicit
        # cleanup, which warns (ResourceWarning) when the Model outlives the interpreter's end
        self._cleanup = _weakref.finalize(self, _shutil.rmtree, directory, ignore_errors=True)
        self.path = _os.path.join(directory, "model.json")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(spec_text)
        self.spec = _json.loads(spec_text)
        self._model = _ropesim.parse_model(spec_text)

    def close(self) -> None:
        """Removes the temporary spec file (``path``); ``run`` and ``trace`` still work."""
        self._cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def run(self, word: str, allow_slow: bool = False) -> dict:
        """The model's output on `word`: the dict of ``ropesim run MODEL --input WORD --json``
        (attention::run, called directly; exact values by type), plus ``certified_length``
        (the construction's certified length N_max recorded in the spec, the compile report's
        key; None when it certifies every length) and ``within_certified_length`` (False when
        the word has more symbols than that: the output is then not certified, THEORY §6).

        Warns with ``CertificationWarning`` (a RuntimeWarning) when the word is longer than the
        certified length, as ``ropesim run`` warns on stderr. Raises ValueError for a symbol
        outside the alphabet or a run beyond the time budget (``allow_slow=True`` lifts it, as
        ``--allow-slow``), TypeError when `word` is not a str.
        """
        return self._run(word, False, allow_slow)

    def trace(self, word: str, allow_slow: bool = False) -> dict:
        """``run`` with every layer's values at EOS: the dict of ``ropesim run MODEL --input WORD
        --trace --json``, with ``run``'s certification keys and warning."""
        return self._run(word, True, allow_slow)

    def _run(self, word, trace, allow_slow):
        result = _ropesim.run_model(self._model, _arguments(["--input", word])[1], trace, False,
                                    bool(allow_slow))
        if not result["within_certified_length"]:
            _warnings.warn(
                # positions end at EOS, position N+1 (with or without BOS)
                f"the input has {result['positions'][-1] - 1} symbols, more than the certified "
                f"length {result['certified_length']} of "
                f"{self!r}; past it the output is not certified (THEORY §6)",
                CertificationWarning, stacklevel=3)
        return result

    def save(self, path: str) -> None:
        """Writes the model spec to `path` (``ropesim run PATH`` runs it)."""
        with open(self.path, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as g:
            g.write(f.read())

    def __repr__(self):
        return f"ropesim.Model({self.formula!r}, alphabet={self.alphabet!r}, format={self.format!r})"


def compile(formula: str, alphabet: str = "ab", format: str = "fp16",
            schedule: str | None = None, rounding: str = "nearest-even",
            layer_norm: bool = False, allow_slow: bool = False) -> Model:
    """Compiles an LTL[P,MOD] formula into an F-transformer (proofs::compile, called directly;
    what ``ropesim compile`` does; THEORY §7).

    `schedule`: the RoPE schedule of every rotary head (``compile --schedule``): the Y^k heads
    use all its blocks; MOD atoms keep their periodic tables under a periodic schedule and are
    built on its block nearest a turn 2πa/m otherwise, exact only up to their certified range
    N_max^MOD (THEORY §7 C4'), or refused. None: single:g=1 for Y^k, periodic tables for MOD.
    Returns a ``Model`` with ``.run(word)`` and ``.trace(word)``; its ``report["out"]`` is
    ``Model.path``. Raises ValueError with the CLI's message when the formula does not parse or
    F cannot realise a construction (e.g. ``compile("mod(2,0)", schedule="llama2-7b")``: no
    bounded MOD_2 on llama2-7b's angles), TypeError for a text argument that is not a str.
    """
    arguments = _ropesim.CompileArguments()
    texts = _arguments(["FORMULA", formula, "--alphabet", alphabet, "--format", format,
                        "--rounding", rounding])
    arguments.formula, arguments.alphabet, arguments.format, arguments.rounding = texts[1::2]
    if schedule is not None:
        arguments.schedule = _arguments(["--schedule", schedule])[1]
    arguments.layer_norm, arguments.allow_slow = bool(layer_norm), bool(allow_slow)
    report, spec_text = _ropesim.compile(arguments)
    model = Model(formula, alphabet, format, report, spec_text)
    report["out"] = model.path
    return model


def classify(alphabet: str = "ab", regex: str | None = None, formula: str | None = None,
             dfa: str | None = None, model: "Model | str | None" = None,
             allow_slow: bool = False) -> dict:
    """Decides LTL[P] / LTL[P,MOD] / neither (THEORY §5): the dict of ``ropesim classify
    --json`` (proofs::classify_language, called directly).

    Give one of `regex`, `formula`, `dfa` (a file path) or `model` (a Model or a spec path).
    Returns the CLI's dict (the class, witnesses, an equivalent formula for LTL[P]). Raises
    ValueError with the CLI's one-line message for bad input (no source or several, a regex or
    formula that does not parse, an alphabet that differs from the DFA's or model's), TypeError
    for a text argument that is not a str.
    """
    if isinstance(model, Model):
        model = model.path
    arguments = _ropesim.ClassifyArguments()
    arguments.alphabet = _arguments(["--alphabet", alphabet])[1]
    for name, value in (("regex", regex), ("formula", formula), ("dfa", dfa), ("model", model)):
        if value is not None:
            setattr(arguments, name, _arguments(["--" + name, value])[1])
    arguments.allow_slow = bool(allow_slow)
    return _ropesim.classify(arguments)


def analyse_heads(model: "Model | str", format: str | None = None,
                  reference_format: str = "fp32", words=None, lengths: str | None = None,
                  per_length: int = 16, seed: int = 1, positional_share="0.9",
                  max_length: int | None = None, allow_slow: bool = False) -> dict:
    """Looks inside a model head by head: the dict of ``ropesim analyse heads MODEL --json``
    (proofs::analyse_heads, called directly; THEORY §6, "Looking inside a model").

    `model`: a ``Model`` or the path of a model spec. Per head (``heads``): its blocks with θ,
    the norms of the block's rows of [Q | b_q] and [K | b_k], the mean norms of Q x + b_q and
    K x + b_k over the words' tokens and the block's share of the |q·k| score mass ([RRWG]; floats,
    binary64 measurements); the fixed-offset test (``offset`` k, ``eligible``, ``at_offset``,
    ``positional``: at least `positional_share` of the eligible queries have their unique
    largest weight at offset k); for a positional head ``certified_range`` (N_max^(k) of its
    positional component in the model's format, proofs::certified_range). ``flips``: the words
    the model's format (`format`, default the spec's) and `reference_format` decide
    differently, with ``first_prefix`` (the shortest prefix that flips, in symbols) and
    ``first_attention_difference``. `words`: a list of words or one comma-separated str
    (instead of `lengths`, default "1..16" with `per_length` words per length, drawn with
    `seed` when there are more). Exact values by type (outputs of F as floats, exact decimals
    as int/float/Fraction). Raises ValueError with the CLI's one-line message for bad input,
    TypeError for a value of the wrong type.
    """
    if isinstance(model, Model):
        model = model.path
    arguments = _ropesim.HeadAnalysisArguments()
    arguments.model = _arguments(["MODEL", model])[1]
    arguments.reference_format = _arguments(["--reference-format", reference_format])[1]
    if format is not None:
        arguments.format = _arguments(["--format", format])[1]
    if words is not None:
        if not isinstance(words, str):
            words = list(words)
            for w in words:
                if not isinstance(w, str):
                    raise TypeError(f"words: expected str words, got {type(w).__name__}")
                if "," in w:
                    raise ValueError(f"words: {w!r} contains a comma, which separates the words")
            words = ",".join(words)
        arguments.words = _arguments(["--words", words])[1]
    if lengths is not None:
        arguments.lengths = _arguments(["--lengths", lengths])[1]
    arguments.per_length = _count("per_length", per_length, 1)
    arguments.seed = _count("seed", seed, 0)
    arguments.positional_share = _arguments(["--positional-share", positional_share])[1]
    if max_length is not None:
        arguments.max_length = _count("max_length", max_length, 1)
    arguments.allow_slow = bool(allow_slow)
    return _ropesim.analyse_heads(arguments)


def _executable() -> str:
    """The ``ropesim`` executable ``cli`` runs: $ROPESIM_BINARY, the build tree's
    (build/python/../ropesim), or ``ropesim`` on PATH. Raises RuntimeError if none exists."""
    import shutil
    here = _os.path.dirname(_os.path.abspath(__file__))
    for path in (_os.environ.get("ROPESIM_BINARY"),
                 _os.path.join(here, "..", "..", "ropesim"), shutil.which("ropesim")):
        if path and _os.path.isfile(path) and _os.access(path, _os.X_OK):
            return path
    raise RuntimeError("ropesim.cli needs the ropesim executable: set ROPESIM_BINARY")


def check(property: str = "all", trials: int = 100, seed: int | None = None,
          max_length: int | None = None, format: str | None = None) -> dict:
    """Runs the theorems as RapidCheck properties (THEORY §5): the dict of ``ropesim check
    --json`` (properties::run_property, called directly).

    Returns the CLI's dict (``properties``: one dict per property with its counts, source,
    description, counterexample and replay command; ``passed``, ``failed``); the list of
    per-property dicts is also given as a DataFrame under ``"table"``. A failing property is
    reported in the dict, not raised. `seed`: RapidCheck's seed (default 20261201, as the CLI);
    the same seed gives the same cases. Raises ValueError with the CLI's one-line message for
    bad input (an unknown property, trials or max_length outside 1..10^8, a format a property
    cannot use), TypeError for a count that is not an int.
    """
    result = _ropesim.check(_check_arguments(property, trials, seed, max_length, format))
    if isinstance(result.get("properties"), list):
        result["table"] = _frame(result["properties"])
    return result


def _check_arguments(property="all", trials=100, seed=None, max_length=None, format=None):
    """The extension's CheckArguments of check()'s arguments (TypeError for a wrong type)."""
    arguments = _ropesim.CheckArguments()
    arguments.property = _arguments(["--property", property])[1]
    arguments.trials = _count("trials", trials, 0)
    if seed is not None:
        arguments.seed = _count("seed", seed, 0)
    if max_length is not None:
        arguments.max_length = _count("max_length", max_length, 0)
    if format is not None:
        arguments.format = _arguments(["--format", format])[1]
    return arguments


def formats(formats: str | None = None, rounding: str = "nearest-even"):
    """The formats table (THEORY §1) as a DataFrame: the rows of ``ropesim formats --json``
    (numeric::format_table, called directly).

    One row per format: name, p, emin, emax, max, min_positive, unit_roundoff, f_large, n_max,
    subnormals, overflow, rounding (numbers exact as the module docstring says: "2^k" and wide
    values come as int or Fraction). `formats`: a list such as ``"bf16,fp16"`` or
    ``"p=4..8,e=5"``; default every preset. Raises ValueError with the CLI's one-line message
    for a bad list or rounding.
    """
    words = _arguments(["--rounding", rounding] + ([] if formats is None else ["--formats", formats]))
    return _frame(_ropesim.formats(None if formats is None else words[3], words[1]))


def experiment_length(formula: str, alphabet: str = "ab", lengths: str = "1..64",
                      schedules=None, formats=None, words: int = 20, seed: int = 1,
                      rounding: str = "nearest-even", adversarial: int = 2,
                      allow_slow: bool = False, out: str | None = None) -> dict:
    """Accuracy of the compiled model against word length: the dict of ``ropesim experiment
    length --json`` (proofs::length_experiment, called directly).

    Per length, `words` members and `words` non-members of the formula's language drawn
    uniformly by exact path counts in its minimal DFA (every word of a side with at most `words`
    words; none of a side that is empty at that length), plus `adversarial` offset-aliasing
    words for Y^k heads; docs/CLI.md gives the draw. `schedules`, `formats`: a name or a list of
    names (one series each). Returns the CLI's dict: ``series`` (certified_length,
    longest_all_right: every word right) and ``rows`` with balanced_accuracy,
    accuracy_members, accuracy_nonmembers (None where that side is empty), accuracy (every word
    tried), the counts and the empty/exhaustive flags; the rows also as a DataFrame under
    ``"table"``. With `out` (a path ending in .csv .md .json .tex) the rows are also written
    there, the bytes ``ropesim experiment length FORMULA --alphabet A --lengths L [--schedule
    S]... [--format F]... --words W --seed S --rounding R --adversarial N [--allow-slow] --out
    PATH`` writes (its provenance names that command, every argument spelled out, the lists
    one flag per item). Raises ValueError with the CLI's one-line message on bad input
    (``words=0``: "--words: ..."), TypeError for a count that is not an int or a text that is
    not a str.
    """
    arguments = dict(formula=formula, alphabet=alphabet, lengths=lengths, schedules=schedules,
                     formats=formats, words=words, seed=seed, rounding=rounding,
                     adversarial=adversarial, allow_slow=allow_slow)
    request = _length_arguments(**arguments)
    if out is not None:
        _ropesim.output_kind(_arguments(["--out", out])[1])
    result = _ropesim.experiment_length(request)
    if out is not None:
        _write_length_table(result["rows"], out, arguments)
    if isinstance(result, dict) and isinstance(result.get("rows"), list):
        result["table"] = _frame(result["rows"])
    return result


def _write_length_table(rows: list, out: str, arguments: dict) -> None:
    """Writes `rows` (the "rows" of experiment_length's dict) to `out` as ``ropesim experiment
    length … --out PATH`` writes them, for the experiment_length `arguments` (its kwargs):
    the table of proofs::length_columns, rendered by io::render with that command's
    provenance."""
    a = dict(alphabet="ab", lengths="1..64", schedules=None, formats=None, words=20, seed=1,
             rounding="nearest-even", adversarial=2, allow_slow=False)
    a.update(arguments)
    words = [("experiment", "", "word"), ("length", "", "word"), (a["formula"], "", "word")]

    def flag(name, value):
        words.extend([(name, name, "name"), (str(value), name, "value")])

    flag("--alphabet", a["alphabet"])
    flag("--lengths", a["lengths"])
    for name, values in (("--schedule", a["schedules"]), ("--format", a["formats"])):
        for value in ([values] if isinstance(values, str) else values or []):
            flag(name, value)
    for name in ("words", "seed", "rounding", "adversarial"):
        flag("--" + name, a[name])
    if a["allow_slow"]:
        words.append(("--allow-slow", "--allow-slow", "name"))
    flag("--out", out)
    part = _ropesim.length_table(_json.dumps(rows))
    _ropesim.write_table([part], out, words, None)


def _length_arguments(formula, alphabet="ab", lengths="1..64", schedules=None, formats=None,
                      words=20, seed=1, rounding="nearest-even", adversarial=2, allow_slow=False):
    """The extension's LengthArguments of experiment_length()'s arguments (TypeError for a
    wrong type)."""
    arguments = _ropesim.LengthArguments()
    texts = _arguments(["FORMULA", formula, "--alphabet", alphabet, "--lengths", lengths,
                        "--rounding", rounding])
    arguments.formula, arguments.alphabet, arguments.lengths, arguments.rounding = texts[1::2]
    for name, flag, values in (("schedules", "--schedule", schedules),
                               ("formats", "--format", formats)):
        if values is not None:
            values = [values] if isinstance(values, str) else list(values)
            setattr(arguments, name, [_arguments([flag, v])[1] for v in values])
    arguments.words = _count("words", words, 0)
    arguments.seed = _count("seed", seed, 0)
    arguments.adversarial = _count("adversarial", adversarial, 0)
    arguments.allow_slow = bool(allow_slow)
    return arguments


def balanced_words(lengths, formula: str | None = None, regex: str | None = None,
                   alphabet: str = "ab", words: int = 20, seed: int = 1) -> list:
    """The balanced words ``experiment_length`` tries at each length (proofs::balanced_words,
    called directly): per length n, the words of L ∩ Σ^n (members) and of Σ^n \\ L
    (non-members), none of a side that is empty at n, every word of a side with at most `words`
    words once (lexicographic), else `words` uniform draws by exact path counts in the
    language's minimal DFA, seeded per (n, side) from `seed` — the same words ``experiment
    length`` draws for the same formula, alphabet, lengths, words and seed.

    Give the language as an LTL[P,MOD] `formula` (each word is checked against the formula's
    own evaluation) or a `regex` (docs/CLI.md ``classify --regex``; for languages without a
    formula, such as PARITY), not both. `lengths`: ascending ints ≥ 1. Returns one dict per
    length: ``length``, ``members``, ``nonmembers`` (lists of str), ``members_empty``,
    ``nonmembers_empty``, ``members_exhaustive``, ``nonmembers_exhaustive``. Raises ValueError
    with a one-line message for bad input (neither or both of formula and regex, lengths not
    ascending, words = 0, an alphabet letter the syntax reserves), TypeError for a count that is
    not an int.
    """
    if (formula is None) == (regex is None):
        raise ValueError("balanced_words: give the language as formula or as regex (exactly one)")
    texts = _arguments(["--alphabet", alphabet] + (["--formula", formula] if formula is not None
                                                   else ["--regex", regex]))
    if isinstance(lengths, (str, bytes)):
        raise TypeError("lengths: expected a list of ints, got a str")
    lengths = [_count("lengths", n, 1) for n in lengths]
    return _ropesim.balanced_words(texts[3] if formula is not None else "",
                                   texts[3] if regex is not None else "", texts[1], lengths,
                                   _count("words", words, 1), _count("seed", seed, 0))
