"""ropesim on a Dask cluster: one task per shard of a command (docs/SCALE.md).

``ropesim.dask.sweep(client, shards=N, out=None, **kwargs)`` computes the table of
``ropesim.sweep(**kwargs)`` as N Dask tasks, task I computing shard I/N (the CLI's ``--shard
I/N``: rows [floor((I-1)·T/N), floor(I·T/N)) of the T rows) by calling the C++ library in the
worker's process (no subprocess, no command line). The parts come back as text, are put in
shard order and joined: the DataFrame equals ``ropesim.sweep(**kwargs)``, and the file written
with ``out=PATH`` has the bytes of ``ropesim sweep … --out PATH`` run as one process, whichever
worker ran which shard and however often a task was re-run: a census depends only on its cell
(attention::sweep), not on the process, the thread count or the other cells. The other
functions work the same way, each with its own shard:

* ``table_horizon``: rows of ``ropesim.table_horizon`` (``table horizon --shard I/N``; a
  horizon report depends on its cell alone), the DataFrame and the ``--out`` file of one run;
* ``table_bounds``: for the kinds with shards, the models or rows of
  ``ropesim.table_bounds`` (proofs::bounds_table), the DataFrame and the ``--out`` file of one
  run;
* ``check``: the properties of ``ropesim.check`` (io::Shard over the properties it runs, in
  order). Not the trials: RapidCheck draws trial t from the t-th split of one random stream
  (discarded cases included) at a size set by the successes so far, so a trial depends on the
  trials before it; a property depends only on its options (each is seeded with the seed);
* ``experiment_length``: the lengths of ``ropesim.experiment_length`` (contiguous groups, in
  order): a length's words come from generators seeded by (seed, length, side) and
  (seed, length, a) alone (proofs::length_experiment), and a model is compiled without the
  lengths; a series' ``longest_all_right`` is joined from the shards' (the first shard whose
  rows are not all right ends it);
* ``experiment_train``: the trained models of ``ropesim.train.experiment_train`` (one task per
  (language, schedule, seed) model, or contiguous groups of them), each trained by
  ``train_one`` on one torch thread: a model depends on its seed and config alone, so the
  results and the model files are the single run's (but for their wall times).

A task lost with its worker is run again by Dask's scheduler on another worker (up to
``distributed.scheduler.allowed-failures`` times); a task that raises is retried `retries`
times. Bad arguments raise TypeError or ValueError in the client before any task is
submitted.

Needs Debian's python3-dask and python3-distributed (scripts/setup installs them); the
workers must import the same ropesim build (a file's provenance names its commit), and torch
for ``experiment_train``. ``table_bounds`` shards only the kinds whose rows are independent
(critical-dim, semantic-drift: the models; positional-head, nope-previous-token: the rows);
base-context and no-decay rows depend on the rows before them and are refused
(docs/SCALE.md).
"""
from __future__ import annotations

import os
import uuid as _uuid

from . import _ropesim
from . import _sweep
from . import _tables

__all__ = ["sweep", "table_horizon", "table_bounds", "check", "experiment_length",
           "experiment_train"]

# The kwargs of ropesim.check and ropesim.experiment_length, in their order.
_CHECK_ARGUMENTS = ("property", "trials", "seed", "max_length", "format")
_LENGTH_ARGUMENTS = ("formula", "alphabet", "lengths", "schedules", "formats", "words", "seed",
                     "rounding", "adversarial", "allow_slow")


def _common(command: str, kwargs: dict, accepted, shards, retries, progress) -> tuple:
    """Checks what every function takes: no kwarg outside `accepted` (TypeError naming it),
    `shards` an int in 1..10^6, `retries` an int >= 0, `progress` a bool. Returns (shards,
    retries)."""
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise TypeError(f"{command}: unexpected argument {unknown[0]!r}; accepted: "
                        f"{', '.join(accepted)} (shard is chosen per task)")
    shards = _sweep._integer("shards", shards, 1)
    if shards is None:
        raise TypeError("shards: expected an int, got NoneType")
    if shards > 1000000:
        raise ValueError(f"shards: {shards} shards; accepted: 1..1000000")
    retries = _sweep._integer("retries", retries, 0)
    if retries is None:
        raise TypeError("retries: expected an int, got NoneType")
    if not isinstance(progress, bool):
        raise TypeError(f"progress: expected a bool, got {type(progress).__name__}")
    return shards, retries


def _run(client, command: str, task, arguments: dict, shards: int, retries: int,
         progress: bool, arrived=None) -> list:
    """Submits task(arguments, I, shards) for I = 1..shards (one key per shard), waits for
    them (with Dask's progress bar when `progress`), and returns their results in shard order,
    whichever worker ran which and in whatever order they finished. A task returns
    (I, result); `arrived(I, result)`, when given, is called in the client as each arrives."""
    import distributed
    run = _uuid.uuid4().hex[:12]
    futures = [client.submit(task, dict(arguments), i, shards, retries=retries, pure=False,
                             key=f"ropesim-{command}-{run}-{i}-of-{shards}")
               for i in range(1, shards + 1)]
    parts = {}
    try:
        if progress:
            distributed.progress(futures)
        for _, (index, part) in distributed.as_completed(futures, with_results=True):
            parts[index] = part
            if arrived is not None:
                arrived(index, part)
    finally:
        for f in futures:
            f.release()
    if sorted(parts) != list(range(1, shards + 1)):  # pragma: no cover - every future is done
        raise RuntimeError(f"{command}: shards returned {sorted(parts)}, expected 1..{shards}")
    return [parts[i] for i in range(1, shards + 1)]


def _shard_task(arguments: dict, index: int, count: int) -> tuple:
    """Runs on a worker: shard index/count of the sweep of `arguments` (the kwargs of
    ropesim.sweep) as (index, io::table_to_json text). One thread per task unless `jobs` says
    otherwise: Dask already runs a task per worker thread."""
    request = _sweep._Request(**arguments)
    jobs = request.jobs if request.jobs is not None else 1
    return index, request.shard(index, count, jobs)


def sweep(client, shards: int, out: str | None = None, progress: bool = False,
          retries: int = 2, **kwargs):
    """The table of ``ropesim.sweep(**kwargs)`` computed on the Dask cluster of `client`
    (a ``distributed.Client``) as `shards` tasks, one per shard; returns the same DataFrame.

    `shards`: N, 1 <= N <= 10^6 (shards beyond the table's T rows are empty). `kwargs`: those of
    ropesim.sweep (models, schedules, formats, realizations, positions, max_period, rounding,
    engine, jobs — threads per task, default 1 —, allow_slow), checked here, in the client,
    before any task is submitted, with the budget counted per shard (one task's work, as
    ``--shard`` counts it). `out`: also write the joined table there (.csv .md .json .tex),
    byte for byte the file of ``ropesim sweep … --out PATH`` run as one process (its provenance
    names that command: ropesim.sweep's docstring gives the order of the flags). `progress`:
    show Dask's progress bar over the tasks (``distributed.progress``: a text bar on a
    terminal, a widget in a notebook). `retries`: how often Dask re-runs a task that raised.

    Raises TypeError or ValueError as ropesim.sweep does (and for `shards`, `out`, or a kwarg
    ropesim.sweep does not take), and whatever a task raised after its retries.
    """
    shards, retries = _common("sweep", kwargs, _sweep.ARGUMENTS, shards, retries, progress)
    request = _sweep._Request(**kwargs)
    if out is not None:
        _ropesim.output_kind(_sweep._text("out", out))
    request.plan(shards)  # the grid and every shard's budget, before submitting
    ordered = _run(client, "sweep", _shard_task, kwargs, shards, retries, progress)
    if out is not None:
        _ropesim.write_table(ordered, out, request.words(out), None)
    return _sweep.frame(ordered)


def _horizon_task(arguments: dict, index: int, count: int) -> tuple:
    """Runs on a worker: shard index/count of the horizon table of `arguments` (the kwargs of
    ropesim.table_horizon) as (index, io::table_to_json text), on `jobs` threads (default 1)."""
    request = _tables._HorizonRequest(**arguments)
    jobs = request.jobs if request.jobs is not None else 1
    return index, request.shard(index, count, jobs)


def table_horizon(client, shards: int, out: str | None = None, progress: bool = False,
                  retries: int = 2, **kwargs):
    """The table of ``ropesim.table_horizon(**kwargs)`` computed on the Dask cluster of
    `client` as `shards` tasks, task I measuring the rows of ``table horizon --shard I/N``
    (rows [floor((I-1)·T/N), floor(I·T/N)) of the T cells, in the table's order: format, head,
    k, C, realization, the last varying fastest); returns the same DataFrame.

    `kwargs`: those of ropesim.table_horizon (formats, g, schedules, k, C, realizations,
    rounding, engine, summation, accumulator, algorithm, max_length, allow_slow, jobs — threads
    per task, default 1), every cell checked here, in the client, before any task is submitted.
    `out`: also write the joined table there (.csv .md .json .tex), byte for byte the file of
    ``ropesim table horizon … --out PATH`` run as one process (ropesim.table_horizon's
    docstring gives the order of the flags). `shards`, `progress`, `retries`: as for ``sweep``.
    A row is one horizon report (proofs::horizon, THEORY §6), which depends on its cell alone,
    so the joined rows are the single run's.

    Raises TypeError or ValueError as ropesim.table_horizon does (and for `shards`, `out`, or
    a kwarg it does not take), and whatever a task raised after its retries.
    """
    shards, retries = _common("table_horizon", kwargs, _tables.HORIZON_ARGUMENTS, shards,
                              retries, progress)
    request = _tables._HorizonRequest(**kwargs)
    if out is not None:
        _ropesim.output_kind(_sweep._text("out", out))
    request.plan()  # every cell, before submitting
    ordered = _run(client, "table-horizon", _horizon_task, kwargs, shards, retries, progress)
    if out is not None:
        _ropesim.write_table(ordered, out, request.words(out), None)
    return _sweep.frame(ordered)


def _bounds_task(arguments: dict, index: int, count: int) -> tuple:
    """Runs on a worker: shard index/count of the bounds table of `arguments` (the kwargs of
    ropesim.table_bounds) as (index, io::table_to_json text), on `jobs` threads (default 1)."""
    request = _tables._BoundsRequest(**arguments)
    jobs = request.jobs if request.jobs is not None else 1
    return index, request.shard(index, count, jobs)


def table_bounds(client, shards: int, kind: str, out: str | None = None, progress: bool = False,
                 retries: int = 2, **kwargs):
    """The table of ``ropesim.table_bounds(kind, **kwargs)`` computed on the Dask cluster of
    `client` as `shards` tasks; returns the same DataFrame.

    Only the kinds whose rows are independent have shards (proofs::bounds_table):
    ``critical-dim`` (one row per model) and ``semantic-drift`` (one group of rows per model)
    split the models (`presets`) into `shards` contiguous groups; ``positional-head`` (format ×
    realization × k) and ``nope-previous-token`` (format × summation, each row seeded with
    `seed`) split the rows (io::Shard: [floor((I-1)·T/N), floor(I·T/N))). ``base-context``
    searches each length's base from the previous length's answer and ``no-decay``'s rows are
    the record distances of one scan, so a shard of them would not be the single run's rows:
    they raise ValueError here (run them with ropesim.table_bounds).

    `kwargs`: those of ropesim.table_bounds (its flags and `jobs`: threads per task, default
    1), checked here, in the client, before any task is submitted. `out`: also write the joined
    table there (.csv .md .json .tex), byte for byte the file of ``ropesim table bounds --kind
    KIND … --out PATH`` run as one process. `shards`, `progress`, `retries`: as for ``sweep``.

    Raises TypeError or ValueError as ropesim.table_bounds does, ValueError for a kind without
    shards, and whatever a task raised after its retries.
    """
    shards, retries = _common("table_bounds", kwargs, _tables.BOUNDS_ARGUMENTS[1:], shards,
                              retries, progress)
    request = _tables._BoundsRequest(kind, **kwargs)
    if out is not None:
        _ropesim.output_kind(_sweep._text("out", out))
    _ropesim.table_bounds_plan(request.request())  # every argument, and the kind has shards
    ordered = _run(client, "table-bounds", _bounds_task, dict(kwargs, kind=kind), shards,
                   retries, progress)
    if out is not None:
        _ropesim.write_table(ordered, out, request.words(out), None)
    return _sweep.frame(ordered)


def _check_task(arguments: dict, index: int, count: int) -> tuple:
    """Runs on a worker: the properties of shard index/count (the dict of ropesim.check
    without its "table")."""
    from . import _check_arguments
    return index, _ropesim.check(_check_arguments(**arguments), index, count)


def check(client, shards: int, progress: bool = False, retries: int = 2, **kwargs) -> dict:
    """The dict of ``ropesim.check(**kwargs)`` computed on the Dask cluster of `client` as
    `shards` tasks: the properties it runs (all, or the one named), in order, split into
    `shards` contiguous groups (io::Shard: properties [floor((I-1)·P/N), floor(I·P/N)) of the
    P), task I running group I; returns the same dict (``properties`` in the single run's
    order, ``passed`` and ``failed`` the sums, ``table`` the DataFrame).

    A shard is a set of properties, not of trials: RapidCheck draws trial t from the t-th split
    of one random stream (discarded cases included) at a size set by the successes so far
    (third_party/rapidcheck/src/detail/Testing.cpp), so trials run apart would be other
    trials; a property's outcome depends only on its options (run_property seeds each property
    with `seed`), not on which properties ran before it in the process. So at most P shards do
    work (P = 1 with ``property=NAME``; the others are empty).

    `kwargs`: those of ropesim.check (property, trials, seed, max_length, format), validated
    here (properties::check_request) before any task is submitted. `shards`, `progress`,
    `retries`: as for ``sweep``. Raises TypeError or ValueError as ropesim.check does.
    """
    shards, retries = _common("check", kwargs, _CHECK_ARGUMENTS, shards, retries, progress)
    from . import _check_arguments, _frame
    _ropesim.check_plan(_check_arguments(**kwargs))
    parts = _run(client, "check", _check_task, kwargs, shards, retries, progress)
    result = {"properties": [p for part in parts for p in part["properties"]],
              "passed": sum(part["passed"] for part in parts),
              "failed": sum(part["failed"] for part in parts)}
    result["table"] = _frame(result["properties"])
    return result


def _length_task(arguments: dict, index: int, count: int) -> tuple:
    """Runs on a worker: the dict of ropesim.experiment_length for the lengths of shard
    index/count (None when it has none)."""
    from . import _length_arguments
    return index, _ropesim.experiment_length(_length_arguments(**arguments), index, count)


def _join_lengths(parts: list) -> dict:
    """The dicts of the shards of one experiment (shard order, None for an empty shard) as
    the dict of the whole run: the rows of each series one shard after the other, series
    first; a series' longest_all_right the last length of the run of shards whose rows are
    all right, ended by the first shard whose rows are not (that shard's value, or the
    previous shard's last length when its first row already fails)."""
    parts = [p for p in parts if p is not None]
    joined = dict(parts[0])
    series, rows = [], []
    for j, first in enumerate(parts[0]["series"]):
        key = (first["schedule"], first["format"])
        longest, ended = None, False
        for part in parts:
            s = part["series"][j]
            for name in ("schedule", "format", "certified_length", "mod_atoms", "refused"):
                if s[name] != first[name]:  # pragma: no cover - the library's contract
                    raise RuntimeError(f"experiment_length: shards disagree on {name} of "
                                       f"series {key}: {first[name]!r} and {s[name]!r}")
            mine = [r for r in part["rows"] if (r["schedule"], r["format"]) == key]
            rows += mine
            if ended or not mine:
                continue
            if s["longest_all_right"] == mine[-1]["length"]:
                longest = s["longest_all_right"]
            else:
                if s["longest_all_right"] is not None:
                    longest = s["longest_all_right"]
                ended = True
        series.append(dict(first, longest_all_right=longest))
    joined["series"], joined["rows"] = series, rows
    return joined


def experiment_length(client, shards: int, out: str | None = None, progress: bool = False,
                      retries: int = 2, **kwargs) -> dict:
    """The dict of ``ropesim.experiment_length(**kwargs)`` computed on the Dask cluster of
    `client` as `shards` tasks: the requested lengths (ascending) split into `shards`
    contiguous groups (io::Shard: lengths [floor((I-1)·L/N), floor(I·L/N)) of the L), task I
    running every (schedule, format) series on group I; returns the same dict (``series``,
    ``rows`` in the single run's order, ``table`` the DataFrame).

    The rows of a length are the single run's: its members and non-members are drawn from
    std::mt19937_64 generators seeded with seed + 0x9E3779B97F4A7C15·(2n + side), its
    offset-aliasing words from seeds of (seed, n, a) with distances that depend on n alone,
    and each model is compiled without the lengths (proofs::length_experiment). Each shard's
    budget is its own lengths' (as ``--shard`` counts a sweep's rows), checked here for every
    shard before any task is submitted; shards past the L lengths are empty.

    `kwargs`: those of ropesim.experiment_length (formula, alphabet, lengths, schedules,
    formats, words, seed, rounding, adversarial, allow_slow). `out`: also write the joined
    rows there (.csv .md .json .tex), byte for byte the file of ``ropesim experiment length …
    --out PATH`` run as one process (ropesim.experiment_length's docstring gives the command).
    `shards`, `progress`, `retries`: as for ``sweep``. Raises TypeError or ValueError as
    ropesim.experiment_length does.
    """
    shards, retries = _common("experiment_length", kwargs, _LENGTH_ARGUMENTS, shards, retries,
                              progress)
    from . import _frame, _length_arguments, _write_length_table
    _ropesim.experiment_length_plan(_length_arguments(**kwargs), shards)
    if out is not None:
        _ropesim.output_kind(_sweep._text("out", out))
    joined = _join_lengths(_run(client, "experiment-length", _length_task, kwargs, shards,
                                retries, progress))
    if out is not None:
        _write_length_table(joined["rows"], out, kwargs)
    joined["table"] = _frame(joined["rows"])
    return joined


# The kwargs of ropesim.train.experiment_train a Dask run takes (not `jobs`: the cluster's
# workers run the models; not `progress`: here it is Dask's bar).
_TRAIN_ARGUMENTS = ("languages", "schedules", "seeds", "config", "out")


def _train_task(arguments: dict, index: int, count: int) -> tuple:
    """Runs on a worker: models [floor((index-1)·M/count), floor(index·M/count)) of the M in
    arguments["models"] ((language, schedule, seed) triples), each by ropesim.train.train_one
    on one torch thread, as (index, [(result, spec file bytes or None), …]). The spec is
    written by train_one itself (to a temporary file, read back) so that its bytes are the
    single run's."""
    import tempfile
    import torch
    from . import train
    torch.set_num_threads(1)  # for the worker process; every experiment_train task sets 1
    models, config = arguments["models"], arguments["config"]
    lo, hi = (index - 1) * len(models) // count, index * len(models) // count
    done = []
    with tempfile.TemporaryDirectory(prefix="ropesim-train-") as tmp:
        for language, schedule, seed in models[lo:hi]:
            spec = os.path.join(tmp, "model.spec.json") if arguments["spec"] else None
            result = train.train_one(language, schedule, seed, config, spec_path=spec)
            text = None
            if spec is not None:
                with open(spec, "rb") as f:
                    text = f.read()
            done.append((result, text))
    return index, done


def experiment_train(client, shards: int | None = None, progress: bool = False,
                     retries: int = 2, **kwargs):
    """The results of ``ropesim.train.experiment_train(**kwargs)`` computed on the Dask
    cluster of `client` (a ``distributed.Client``); returns the same ``(results, table)``.

    The M models to train — the grid's (language, schedule, seed) in order, language first,
    seed last, less those reused from `out` — are submitted as `shards` tasks: with
    ``shards=None`` (the default) one task per model, else models [floor((I-1)·M/N),
    floor(I·M/N)) in task I (1 <= N <= 10^6; tasks past the M models are empty). Each task calls
    ``ropesim.train.train_one`` in the worker's process on one torch thread (the single run's
    thread count), and the client puts the results in grid order: a model's result depends on
    its (language, schedule, seed) and `config` alone (torch seeded with the seed, the training
    words drawn with it, the test words with ``config.test_seed``; THEORY §8, docs/TRAINED.md),
    so `results` equals the single run's, and `table` its ``summary``, except the wall times
    ``train_seconds``, ``eval_seconds`` and ``train_seconds_mean`` (measured: the same bits on
    1, 2 or 4 torch threads; docs/SCALE.md).

    `kwargs`: those of ropesim.train.experiment_train — `languages`, `schedules`, `seeds`,
    `config` (a TrainConfig), `out` — checked here, in the client, before any task is
    submitted (not `jobs`: the cluster's workers run the models; `progress` is Dask's progress
    bar over the tasks here, as for ``sweep``). With `out` the client writes each model's files
    as its task returns — ``out/models/NAME-seedS.json`` and ``NAME-seedS.spec.json``, the
    spec's bytes the single run's, the JSON the single run's but for its wall times — and a
    model stored there for the same config is reused, not submitted (resumable per model, as
    the single run). `retries`: as for ``sweep``. The workers must import torch.

    Raises TypeError or ValueError as ropesim.train.experiment_train does (and for `shards` or
    a kwarg it does not take here), and whatever a task raised after its retries.
    """
    from . import train
    shards_given = 1 if shards is None else shards
    shards_given, retries = _common("experiment_train", kwargs, _TRAIN_ARGUMENTS, shards_given,
                                    retries, progress)
    grid = {name: kwargs.get(name, default) for name, default in (
        ("languages", ("MOD_3",)), ("schedules", ("nope", "periodic", "rope-1e4")),
        ("seeds", (0, 1, 2)), ("config", train.TrainConfig()))}
    languages, schedules, seeds = train._arguments(**grid)
    config, out = grid["config"], kwargs.get("out")
    if out is not None:
        out = os.fspath(out)  # TypeError for what is not a path
    todo, results = train._pending(languages, schedules, seeds, config, out, lambda line: None)
    shards = len(todo) if shards is None else shards_given

    def arrived(index: int, part: list) -> None:
        for result, spec in part:
            if out is not None:
                base = train._result_path(out, result["language"], result["schedule"],
                                          result["seed"])
                with open(base + ".spec.json", "wb") as f:
                    f.write(spec)
                train._write_result(base, result)
            results.append(result)

    if todo:
        _run(client, "experiment-train", _train_task,
             {"models": todo, "config": config, "spec": out is not None}, shards, retries,
             progress, arrived)
    return train._collect(results, languages, schedules, seeds)
