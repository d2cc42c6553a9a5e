"""ropesim on a Dask cluster: a sweep as one task per shard (docs/SCALE.md).

``ropesim.dask.sweep(client, shards=N, out=None, **kwargs)`` computes the table of
``ropesim.sweep(**kwargs)`` as N Dask tasks, task I computing shard I/N (the CLI's ``--shard
I/N``: rows [floor((I-1)·T/N), floor(I·T/N)) of the T rows) by calling the C++ library in the
worker's process (no subprocess, no command line). The parts come back as text, are put in
shard order and joined: the DataFrame equals ``ropesim.sweep(**kwargs)``, and the file written
with ``out=PATH`` has the bytes of ``ropesim sweep … --out PATH`` run as one process, whichever
worker ran which shard and however often a task was re-run: a census depends only on its cell
(attention::sweep), not on the process, the thread count or the other cells. A task lost with
its worker is run again by Dask's scheduler on another worker (up to
``distributed.scheduler.allowed-failures`` times); a task that raises is retried `retries`
times.

Needs Debian's python3-dask and python3-distributed (scripts/setup installs them); the
workers must import the same ropesim build (the file's provenance names its commit).
Done: ``sweep``. The CLI's other shardable command, ``table horizon``, and ``table bounds``,
``check`` and ``experiment_length`` have no Dask form yet (docs/SCALE.md).
"""
from __future__ import annotations

import uuid as _uuid

from . import _sweep

__all__ = ["sweep"]


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
    unknown = sorted(set(kwargs) - set(_sweep.ARGUMENTS))
    if unknown:
        raise TypeError(f"sweep: unexpected argument {unknown[0]!r}; accepted: "
                        f"{', '.join(_sweep.ARGUMENTS)} (shard is chosen per task)")
    shards = _sweep._integer("shards", shards, 1)
    if shards is None:
        raise TypeError("shards: expected an int, got NoneType")
    if shards > 1000000:
        raise ValueError(f"shards: {shards} shards; accepted: 1..1000000")
    retries = _sweep._integer("retries", retries, 0)
    if not isinstance(progress, bool):
        raise TypeError(f"progress: expected a bool, got {type(progress).__name__}")
    request = _sweep._Request(**kwargs)
    if out is not None:
        _sweep._ropesim.output_kind(_sweep._text("out", out))
    request.plan(shards)  # the grid and every shard's budget, before submitting
    run = _uuid.uuid4().hex[:12]
    futures = [client.submit(_shard_task, dict(kwargs), i, shards, retries=retries, pure=False,
                             key=f"ropesim-sweep-{run}-{i}-of-{shards}")
               for i in range(1, shards + 1)]
    try:
        if progress:
            import distributed
            distributed.progress(futures)
        results = client.gather(futures)
    finally:
        for f in futures:
            f.release()
    parts = dict(results)
    if sorted(parts) != list(range(1, shards + 1)):  # pragma: no cover - gather returns all
        raise RuntimeError(f"sweep: shards returned {sorted(parts)}, expected 1..{shards}")
    ordered = [parts[i] for i in range(1, shards + 1)]
    if out is not None:
        _sweep._ropesim.write_table(ordered, out, request.words(out), None)
    return _sweep.frame(ordered)
