"""ropesim.table_horizon and ropesim.table_bounds: the tables of ``ropesim table horizon`` and
``ropesim table bounds`` from the C++ library, in this process (table bounds: proofs::bounds_table).

The grid is split and every cell checked by the library as the CLI checks it
(proofs::horizon_grid, proofs::horizon_grid_specs), every row is a horizon report (proofs::horizon,
THEORY §6) measured by proofs::horizon_rows, the table is proofs::horizon_table's, and a file is
rendered and written by io::render with the command line that makes the same file. Shards
(``shard=(i, n)``) are the CLI's ``--shard I/N``; ropesim.dask runs them as Dask tasks.
"""
from __future__ import annotations

from fractions import Fraction as _Fraction

import numpy as _np

from . import _ropesim
from . import _sweep

# The arguments of table_horizon() that are lists, in the order the recorded command lists
# them (cli/table_command.cpp), with the CLI flag and how a list is joined (a format spec such
# as p=4..8,e=5 holds commas, a schedule spec too: those lists are joined with ';').
_LIST_FLAGS = (
    ("formats", "--formats", ";"),
    ("g", "--g", ","),
    ("schedules", "--schedules", ";"),
    ("k", "--k", ","),
    ("C", "--C", ","),
    ("realizations", "--realizations", ","),
)
# The single-valued text flags, in the recorded order after the lists.
_TEXT_FLAGS = (
    ("rounding", "--rounding"),
    ("engine", "--engine"),
    ("summation", "--summation"),
    ("accumulator", "--accumulator"),
    ("algorithm", "--algorithm"),
)
# Every argument of the computation (the kwargs ropesim.dask.table_horizon passes on).
HORIZON_ARGUMENTS = tuple(n for n, _, _ in _LIST_FLAGS) + tuple(n for n, _ in _TEXT_FLAGS) + (
    "max_length", "allow_slow", "jobs")


def _item_text(name: str, value) -> str:
    """One item of a list flag: a str as it is, an int, a Fraction as P/Q, a float as Python
    prints it (the shortest decimal that reads back as it: "0.1" is the exact decimal 0.1, as
    ``--g 0.1`` is). TypeError for anything else (None, a bool)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float, _Fraction, _np.integer)):
        raise TypeError(f"{name}: expected a str, a number or a list of them, got "
                        f"{type(value).__name__} {value!r}")
    return str(value)


def _list_text(name: str, value, joiner: str):
    """`value` as the flag's text: None stays None; a str as it is; a number, or a list/tuple
    of str and numbers joined by `joiner`. ValueError for a NUL character."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = joiner.join(_item_text(name, v) for v in value)
    return _sweep._text(name, _item_text(name, value))


class _HorizonRequest:
    """The arguments of one horizon table, checked for type, with the command words that spell
    them."""

    def __init__(self, formats=None, g=None, schedules=None, k=None, C=None, realizations=None,
                 rounding=None, engine=None, summation=None, accumulator=None, algorithm=None,
                 max_length=None, allow_slow=False, jobs=None):
        given = locals()
        self.given = {}  # argument -> its flag text, for the arguments given (not None)
        for name, _, joiner in _LIST_FLAGS:
            self.given[name] = _list_text(name, given[name], joiner)
        for name, _ in _TEXT_FLAGS:
            self.given[name] = _sweep._text(name, given[name])
        if self.given["g"] is not None and self.given["schedules"] is not None:
            raise ValueError("g: give either g (frequencies) or schedules (multi-frequency "
                             "heads), not both")
        self.given["max_length"] = _sweep._integer("max_length", max_length, 1)
        self.jobs = _sweep._integer("jobs", jobs, 0, _sweep.MAX_JOBS)
        if not isinstance(allow_slow, bool):
            raise TypeError(f"allow_slow: expected a bool, got {type(allow_slow).__name__}")
        self.allow_slow = allow_slow

    def flags(self):
        """The extension's HorizonTableFlags (None: the CLI's default)."""
        f = _ropesim.HorizonTableFlags()
        for name in [n for n, _, _ in _LIST_FLAGS] + [n for n, _ in _TEXT_FLAGS] + ["max_length"]:
            setattr(f, name, self.given[name])
        f.allow_slow = self.allow_slow
        return f

    def words(self, out: str | None = None, shard: tuple[int, int] | None = None) -> list:
        """The command words of ``ropesim table horizon`` that computes this table (and writes
        it to `out`, as shard `shard`): (text, option, role) each, the flags given in the order
        --formats --g --schedules --k --C --realizations --rounding --engine --summation
        --accumulator --algorithm --max-length --out --jobs --shard --allow-slow."""
        words = [("table", "", "word"), ("horizon", "", "word")]
        flags = [(flag, self.given[name]) for name, flag, _ in _LIST_FLAGS]
        flags += [(flag, self.given[name]) for name, flag in _TEXT_FLAGS]
        flags += [("--max-length", self.given["max_length"]), ("--out", out),
                  ("--jobs", self.jobs),
                  ("--shard", None if shard is None else f"{shard[0]}/{shard[1]}")]
        for flag, value in flags:
            if value is not None:
                words += [(flag, flag, "name"), (str(value), flag, "value")]
        if self.allow_slow:
            words.append(("--allow-slow", "--allow-slow", "name"))
        return words

    def plan(self) -> int:
        """Checks every cell as the CLI does before measuring any; returns T, the rows of the
        whole table."""
        return _ropesim.table_horizon_plan(self.flags())

    def shard(self, index: int, count: int, jobs: int, progress=None) -> str:
        """Shard index/count of the table as io::table_to_json text (what a Dask task
        returns)."""
        table, _ = _ropesim.table_horizon_shard(self.flags(), jobs, index, count, progress)
        return table


def table_horizon(formats=None, g=None, schedules=None, k=None, C=None, realizations=None,
                  rounding=None, engine=None, summation=None, accumulator=None, algorithm=None,
                  max_length=None, allow_slow=False, jobs=None, shard=None, out=None,
                  progress=None):
    """The bound table of ``ropesim table horizon``: the certified range N_max^(k) of the Y^k
    head (THEORY §6) for every format × head × k × C × realization, one row a cell, as a
    pandas.DataFrame.

    Arguments are the CLI's flags (docs/CLI.md, ``ropesim table horizon``), None meaning the
    CLI's default: `formats` (default ``fp8e5m2,bf16,fp16,tf32,fp32``), `g` frequencies (exact
    decimals or P/Q, default ``1``) or `schedules` (multi-frequency heads: presets or specs;
    not both), `k` offsets (default ``1,2,4,8``), `C` scales or ``"auto"`` (the default),
    `realizations` (default ``r1``) — each a str as the flag spells it, or a list of str and
    numbers —, `rounding`, `engine`, `summation`, `accumulator`, `algorithm` (auto, candidates,
    scan), `max_length` L_max of every scan (default: each head's quick limit), `allow_slow`
    (a `max_length` whose estimate exceeds the budget of 10 min), `jobs` (threads, 0 every
    core; the table does not depend on it). `shard=(I, N)` is ``--shard I/N``: only rows
    [floor((I-1)·T/N), floor(I·T/N)) of the T rows. `progress`: a callable
    ``progress(done, total)`` called after each row.

    Columns (the CLI's, in its order): format, g, k, realization, C, f_large, n_max,
    fail_query, fail_competitor, offset, gap, delta_bound, tie_distance, heuristic, tie_cap,
    pm_ceiling; values as ``ropesim table horizon --json`` gives them under those keys (C and
    n_max as numbers there; the JSON's other keys, the whole horizon report, are left out).

    With `out` (a path ending in .csv .md .json .tex) the table is also written there, the
    bytes ``ropesim table horizon … --out PATH`` writes: its provenance names that command, the
    flags given here in the order --formats --g --schedules --k --C --realizations --rounding
    --engine --summation --accumulator --algorithm --max-length --out --jobs --shard
    --allow-slow (with `shard`, a shard file ``ropesim merge`` joins).

    Raises TypeError for an argument of the wrong type, ValueError with the CLI's one-line
    message for bad input (an unknown format, k out of 1..10^6, a grid item given twice, an
    empty grid, a max_length past the budget), before measuring anything.
    """
    request = _HorizonRequest(formats, g, schedules, k, C, realizations, rounding, engine,
                              summation, accumulator, algorithm, max_length, allow_slow, jobs)
    index, count = _sweep._check_shard(shard) if shard is not None else (1, 1)
    if out is not None:
        _ropesim.output_kind(_sweep._text("out", out))
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable or None, got {type(progress).__name__}")
    rows = request.plan()
    part = request.shard(index, count, request.jobs if request.jobs is not None else 0, progress)
    if out is not None:
        if shard is None:
            _ropesim.write_table([part], out, request.words(out), None)
        else:
            _ropesim.write_table([part], out, request.words(out, (index, count)),
                                 (index, count, rows))
    return _sweep.frame([part])


# table_bounds(): each argument, its CLI flag and how a list is joined (None: not a list), in
# the order `ropesim table bounds --help` lists the flags (the order of the recorded command).
_BOUNDS_FLAGS = (
    ("dim", "--dim", "int"),
    ("lengths", "--lengths", ","),
    ("from_", "--from", "int"),
    ("formats", "--formats", ";"),
    ("realization", "--realization", None),
    ("finite_max_length", "--finite-max-length", "int"),
    ("presets", "--presets", ";"),
    ("realizations", "--realizations", ","),
    ("positions", "--positions", "int"),
    ("tolerance", "--tolerance", None),
    ("p", "--p", ","),
    ("max_length", "--max-length", "int"),
    ("k", "--k", ","),
    ("summations", "--summations", ","),
    ("length", "--length", "int"),
    ("trials", "--trials", "int"),
    ("seed", "--seed", "int"),
    ("schedule", "--schedule", None),
    ("key_position", "--key-position", "int"),
)
# Every argument of the computation (the kwargs ropesim.dask.table_bounds passes on).
BOUNDS_ARGUMENTS = ("kind",) + tuple(n for n, _, _ in _BOUNDS_FLAGS) + ("jobs",)


class _BoundsRequest:
    """The arguments of one bounds table, checked for type, with the command words that spell
    them."""

    def __init__(self, kind, jobs=None, **flags):
        self.kind = _sweep._text("kind", kind)
        if self.kind is None:
            raise TypeError("kind: expected a str, got NoneType")
        self.given = {}  # argument -> its flag text or int, for the arguments given
        known = {n for n, _, _ in _BOUNDS_FLAGS}
        unknown = sorted(set(flags) - known)
        if unknown:
            raise TypeError(f"table_bounds: unexpected argument {unknown[0]!r}; accepted: kind, "
                            f"{', '.join(n for n, _, _ in _BOUNDS_FLAGS)}, jobs, out, progress")
        for name, _, how in _BOUNDS_FLAGS:
            value = flags.get(name)
            if how == "int":
                self.given[name] = _sweep._integer(name, value, 0)
            elif how is None:
                self.given[name] = _sweep._text(name, value if value is None
                                                else _item_text(name, value))
            else:
                self.given[name] = _list_text(name, value, how)
        self.jobs = _sweep._integer("jobs", jobs, 0, _sweep.MAX_JOBS)

    def request(self):
        """The extension's TableBoundsRequest (the CLI's default where not given)."""
        r = _ropesim.TableBoundsRequest()
        r.kind = self.kind
        for name, value in self.given.items():
            if value is not None:
                setattr(r, name, value)
        return r

    def words(self, out: str | None = None) -> list:
        """The command words of ``ropesim table bounds`` that computes this table (and writes
        it to `out`): --kind, then the flags given in the order of _BOUNDS_FLAGS, --out,
        --jobs."""
        words = [("table", "", "word"), ("bounds", "", "word"), ("--kind", "--kind", "name"),
                 (self.kind, "--kind", "value")]
        flags = [(flag, self.given[name]) for name, flag, _ in _BOUNDS_FLAGS]
        flags += [("--out", out), ("--jobs", self.jobs)]
        for flag, value in flags:
            if value is not None:
                words += [(flag, flag, "name"), (str(value), flag, "value")]
        return words

    def shard(self, index: int, count: int, jobs: int, progress=None) -> str:
        """Shard index/count of the table as io::table_to_json text."""
        return _ropesim.table_bounds_shard(self.request(), jobs, index, count, progress)


def table_bounds(kind, jobs=None, out=None, progress=None, **flags):
    """A table of ``ropesim table bounds --kind KIND``: bounds from the RoPE literature, exactly
    and at finite precision (docs/BOUNDS.md), as a pandas.DataFrame.

    `kind`: base-context (Men et al. 2024, Table 1: the smallest base with B_m >= 0 for m <= L,
    THEORY §3), critical-dim (Liu et al. 2023: d_extra, T_extra per preset), semantic-drift
    (Barbero et al. 2024: where the low-frequency channels move q·k by more than `tolerance`),
    positional-head (the previous-token head on θ_1 = 1, its certified range, THEORY §6),
    nope-previous-token (a NoPE head on permuted prefixes) or no-decay (q·k at the record
    distances, exact and realised). `flags`: the CLI's flags as keyword arguments, None or
    absent meaning the CLI's default, each read by the kinds that use it (docs/CLI.md): `dim`,
    `lengths`, `from_` (--from), `formats`, `realization`, `finite_max_length`, `presets`,
    `realizations`, `positions`, `tolerance`, `p`, `max_length`, `k`, `summations`, `length`,
    `trials`, `seed`, `schedule`, `key_position` — a list flag as a str the flag spells or a
    list of str and numbers, an integer flag as an int. `jobs`: threads (0 every core; the
    table does not depend on it). `progress`: a callable ``progress(text)`` given a line of
    progress.

    Columns: the kind's, in the CLI's order (docs/BOUNDS.md), values as ``ropesim table bounds
    --json`` gives them under those keys. With `out` (.csv .md .json .tex) the table is also
    written there, the bytes ``ropesim table bounds --kind KIND … --out PATH`` writes (its
    provenance names that command, the flags given in the order ``--help`` lists them, then
    --out, --jobs).

    Raises TypeError for an argument of the wrong type or name, ValueError with the CLI's
    one-line message for bad input (an unknown kind or format, a number out of the flag's
    range), before computing anything.
    """
    request = _BoundsRequest(kind, jobs, **flags)
    if out is not None:
        _ropesim.output_kind(_sweep._text("out", out))
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable or None, got {type(progress).__name__}")
    part = request.shard(1, 1, request.jobs if request.jobs is not None else 0, progress)
    if out is not None:
        _ropesim.write_table([part], out, request.words(out), None)
    return _sweep.frame([part])
