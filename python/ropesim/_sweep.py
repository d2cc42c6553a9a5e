"""ropesim.sweep: the sweep table of ``ropesim sweep`` from the C++ library, in this process.

The grid is parsed and checked by the library as the CLI checks it (attention::sweep_grid),
every cell is a rotation census (attention::sweep, THEORY §3), the rows are
attention::sweep_table's, and a file is rendered and written by io::render with the command
line that makes the same file (io::provenance_of). Shards (``shard=(i, n)``) are the CLI's
``--shard I/N``. ropesim.dask runs the shards as Dask tasks (python/ropesim/dask.py).
"""
from __future__ import annotations

import json as _json
import warnings as _warnings

import numpy as _np

from . import _ropesim

# The arguments of sweep() that spell the grid, in the order the recorded command lists
# them (docs/CLI.md's usage line), with the CLI flag and how a list is joined.
_GRID_FLAGS = (
    ("models", "--models", ","),
    ("schedules", "--schedules", ";"),
    ("formats", "--formats", ";"),
    ("realizations", "--realizations", ","),
)
# The CLI's defaults (ropesim sweep --help), used where an argument is None.
_DEFAULTS = {"formats": "bf16,fp16,fp32,fp64", "realizations": "r1,r2,hf",
             "rounding": "nearest-even", "engine": "auto", "positions": 65536}
# Every argument of the computation (the kwargs ropesim.dask.sweep passes on).
ARGUMENTS = ("models", "schedules", "formats", "realizations", "positions", "max_period",
             "rounding", "engine", "jobs", "allow_slow")


def _text(name: str, value, joiner: str | None = None):
    """`value` as the flag's text: None stays None; a str as it is; a list/tuple of str joined
    by `joiner` (lists only where `joiner` is given). TypeError for anything else, ValueError
    for a NUL character."""
    if value is None:
        return None
    if joiner is not None and isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise TypeError(f"{name}: expected a str or a list of str, got {value!r}")
        value = joiner.join(value)
    if not isinstance(value, str):
        kinds = "a str or a list of str" if joiner else "a str"
        raise TypeError(f"{name}: expected {kinds}, got {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{name}: contains a NUL character, which no argument can hold")
    return value


# The CLI's cap on --jobs (cli/jobs.cpp: threads 0..256, 0 every core).
MAX_JOBS = 256


def _integer(name: str, value, minimum: int, maximum: int = 2**64 - 1):
    """None, or `value` as an int in minimum..maximum (TypeError for bool, float, str;
    ValueError outside, naming the accepted range; `jobs` takes MAX_JOBS as its maximum)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}, got {value}")
    if value > maximum:
        raise ValueError(f"{name}: {value} is out of range; accepted: an integer in "
                         f"{minimum}..{maximum}")
    return int(value)


class _Request:
    """The arguments of one sweep, checked for type, with the command words that spell them."""

    def __init__(self, models=None, schedules=None, formats=None, realizations=None,
                 positions=None, max_period=None, rounding=None, engine=None, jobs=None,
                 allow_slow=False):
        self.given = {}  # argument -> its flag text, for the arguments given (not None)
        for name, _, joiner in _GRID_FLAGS:
            self.given[name] = _text(name, locals()[name], joiner)
        self.given["rounding"] = _text("rounding", rounding)
        self.given["engine"] = _text("engine", engine)
        # positions below 2 and max_period out of 1..N-1 are the library's refusal (the CLI's
        # message); here only their type
        self.given["positions"] = _integer("positions", positions, 0)
        self.given["max_period"] = _integer("max_period", max_period, 0)
        self.jobs = _integer("jobs", jobs, 0, MAX_JOBS)
        if not isinstance(allow_slow, bool):
            raise TypeError(f"allow_slow: expected a bool, got {type(allow_slow).__name__}")
        self.allow_slow = allow_slow

    def library_arguments(self):
        """The positional arguments the extension's sweep_plan/sweep_shard start with."""
        g = self.given
        value = lambda name: g[name] if g[name] is not None else _DEFAULTS[name]  # noqa: E731
        return (g["models"], g["schedules"], value("formats"), value("realizations"),
                value("positions"), g["max_period"], value("rounding"), value("engine"))

    def words(self, out: str | None = None, shard: tuple[int, int] | None = None) -> list:
        """The command words of ``ropesim sweep`` that computes this table (and writes it to
        `out`, as shard `shard`): (text, option, role) each, the flags given in the order
        --models --schedules --formats --realizations --positions --max-period --rounding
        --engine --out --jobs --shard --allow-slow."""
        words = [("sweep", "", "word")]
        flags = [(flag, self.given[name]) for name, flag, _ in _GRID_FLAGS]
        flags += [("--positions", self.given["positions"]),
                  ("--max-period", self.given["max_period"]),
                  ("--rounding", self.given["rounding"]), ("--engine", self.given["engine"]),
                  ("--out", out), ("--jobs", self.jobs),
                  ("--shard", None if shard is None else f"{shard[0]}/{shard[1]}")]
        for flag, value in flags:
            if value is not None:
                words += [(flag, flag, "name"), (str(value), flag, "value")]
        if self.allow_slow:
            words.append(("--allow-slow", "--allow-slow", "name"))
        return words

    def plan(self, shards: int = 1, only: int = 0) -> int:
        """Checks the grid and the budget of each of `shards` shards (of shard `only` alone
        when it is not 0), as the CLI does before anything is computed; warns (UserWarning)
        where the CLI warns on stderr; returns T, the rows of the whole table."""
        rows, warnings = _ropesim.sweep_plan(*self.library_arguments(), shards, only,
                                             self.allow_slow)
        for text in warnings:
            _warnings.warn(text, stacklevel=3)
        return rows

    def shard(self, index: int, count: int, jobs: int, progress=None) -> str:
        """Shard index/count of the table, as io::table_to_json text (a str that pickles as it
        is: what a Dask task returns)."""
        table, _ = _ropesim.sweep_shard(*self.library_arguments(), jobs, index, count,
                                        self.allow_slow, progress)
        return table


def _check_shard(shard):
    """`shard` as (I, N) with ints 1 <= I <= N <= 10^6 (the CLI's --shard I/N)."""
    if not isinstance(shard, tuple) or len(shard) != 2:
        raise TypeError(f"shard: expected a tuple (I, N), got {shard!r}")
    index, count = (_integer("shard", v, 0) for v in shard)
    if not 1 <= index <= count <= 1000000:
        raise ValueError(f"shard: ({index}, {count}) is not I/N; accepted: integers "
                         f"1 <= I <= N <= 1000000")
    return index, count


def frame(parts):
    """The rows of the table parts (io::table_to_json texts, in shard order) as a
    pandas.DataFrame with the table's columns (the list of dicts where pandas does not
    import): the objects ``ropesim sweep --json`` prints, each value by its JSON type."""
    records = _json.loads(_ropesim.table_records(list(parts)))
    columns = _json.loads(parts[0])["columns"]
    try:
        import pandas
    except ImportError:  # pragma: no cover - pandas is installed by scripts/setup
        return records
    return pandas.DataFrame(records, columns=columns)


def sweep(models=None, schedules=None, formats=None, realizations=None, positions=None,
          max_period=None, rounding=None, engine=None, jobs=None, shard=None, out=None,
          allow_slow=False, progress=None):
    """The sweep table of ``ropesim sweep``: the rotation census of every schedule ×
    realization × format (THEORY §3), one row a cell, as a pandas.DataFrame.

    Arguments are the CLI's flags (docs/CLI.md, ``ropesim sweep``), None meaning the CLI's
    default: `models` preset names or ``"all"`` (default: every preset when `schedules` is
    None too), `schedules` specs, `formats` (default ``bf16,fp16,fp32,fp64``), `realizations`
    (default ``r1,r2,hf``) — each a str as the flag spells it, or a list of str —, `positions`
    N (positions 0..N-1, 2 <= N <= 2^31, default 65536), `max_period` P_max for witnesses
    (1..N-1, default N/2), `rounding`, `engine`, `jobs` (threads, 0 every core; the table does
    not depend on it), `allow_slow` (past the budget of 30 minutes or 8 GiB). `shard=(I, N)`
    is ``--shard I/N``: only rows [floor((I-1)·T/N), floor(I·T/N)) of the T rows. `progress`:
    a callable ``progress(done, total)`` called after each cell.

    Columns (the CLI's, in its order): schedule, realization, format, rounding, positions,
    distinct, largest_class, largest_class_position, first_repeat ([earlier, later] or None),
    periodic, period, witnessed, max_period, max_witness, max_witness_period, blocks,
    periodic_blocks, min_block_distinct, overflow_positions, first_overflow, nan_positions,
    first_nan, note (why a realization does not apply; the census columns are None then).
    Values are those of ``ropesim sweep --json``; a column with None holds floats (NaN) or
    objects, as pandas makes it.

    With `out` (a path ending in .csv .md .json .tex) the table is also written there, the
    bytes ``ropesim sweep … --out PATH`` writes: its provenance names that command, the flags
    given here in the order --models --schedules --formats --realizations --positions
    --max-period --rounding --engine --out --jobs --shard --allow-slow (so with `shard` the
    file is a shard file ``ropesim merge`` joins).

    Raises TypeError for an argument of the wrong type, ValueError with the CLI's one-line
    message for bad input (an unknown preset or format, N out of range, an empty grid, the
    budget exceeded), before computing anything; warns (UserWarning) where the CLI warns.
    """
    request = _Request(models, schedules, formats, realizations, positions, max_period,
                       rounding, engine, jobs, allow_slow)
    index, count = _check_shard(shard) if shard is not None else (1, 1)
    if out is not None:
        _ropesim.output_kind(_text("out", out))
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable or None, got {type(progress).__name__}")
    rows = request.plan(count, index)
    part = request.shard(index, count, request.jobs if request.jobs is not None else 0, progress)
    if out is not None:
        if shard is None:
            _ropesim.write_table([part], out, request.words(out), None)
        else:
            _ropesim.write_table([part], out, request.words(out, (index, count)),
                                 (index, count, rows))
    return frame([part])
