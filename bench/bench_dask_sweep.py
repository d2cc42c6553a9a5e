"""The speed-up of ropesim.dask on local Dask workers over one process (docs/SCALE.md).

Runs one grid of COMMAND (sweep, or table_horizon with --command horizon), round after round, as
  one    ropesim.COMMAND(jobs=1)                     one process, one thread
  dask   ropesim.dask.COMMAND(client, shards=S)      W worker processes of one thread each
  jobs   ropesim.COMMAND(jobs=W)                     one process, W threads
(the order rotates between rounds), checks that the three tables are equal, and prints each wall
time and CPU time (user and system, this process and the workers'), the ratios one/dask and
one/jobs per round with their median, and the load average before and after each run (the
machine may be shared). The cluster is started once, before the rounds (its start-up time is
printed apart).

  PYTHONPATH=build/python nice -n 15 /usr/bin/python3 bench/bench_dask_sweep.py \\
      [--command sweep|horizon] [--workers 2] [--shards 4] [--rounds 3] [--positions 16384]
      [--models ...] [--formats ...] [--k ...]

The sweep's grid: --models × --realizations × --formats at --positions. The horizon's:
--formats (default p=26..30,e=11: 0.4-0.5 s a cell on one thread here, candidate algorithm)
× --k (default 1,2,4), C auto, realization r1.
"""
import argparse
import logging
import os
import resource
import statistics
import time

import distributed

import ropesim
import ropesim.dask


def cpu_seconds():
    """(user, system) CPU seconds of this process so far (all its threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", choices=("sweep", "horizon"), default="sweep")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--positions", type=int, default=16384)
    parser.add_argument("--models", default="llama2-7b,llama3-8b,gemma-7b,phi-2")
    parser.add_argument("--formats", default=None)
    parser.add_argument("--realizations", default="r1,r2,hf")
    parser.add_argument("--k", default="1,2,4")
    parser.add_argument("--saturation", type=float, default=None,
                        help="distributed.scheduler.worker-saturation (Dask's default 1.1: a "
                             "one-thread worker is sent ceil(1.1) = 2 tasks at once)")
    a = parser.parse_args()
    if a.command == "sweep":
        grid = dict(models=a.models, formats=a.formats or "bf16,fp16,fp32",
                    realizations=a.realizations, positions=a.positions)
        single, sharded = ropesim.sweep, ropesim.dask.sweep
    else:
        grid = dict(formats=a.formats or "p=26..30,e=11", k=a.k)
        single, sharded = ropesim.table_horizon, ropesim.dask.table_horizon
    print(f"{a.command} grid {grid}; {a.workers} workers x 1 thread, {a.shards} shards; "
          f"{os.cpu_count()} cores", flush=True)
    if a.saturation is not None:
        import dask
        dask.config.set({"distributed.scheduler.worker-saturation": a.saturation})
    print(f"worker-saturation "
          f"{__import__('dask').config.get('distributed.scheduler.worker-saturation')}",
          flush=True)
    start = time.monotonic()
    cluster = distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    client.run(lambda: __import__("ropesim"))  # import ropesim in every worker first
    print(f"cluster start-up and import: {time.monotonic() - start:.1f} s", flush=True)
    runs = {
        "one": lambda: single(**grid, jobs=1),
        "dask": lambda: sharded(client, shards=a.shards, **grid),
        "jobs": lambda: single(**grid, jobs=a.workers),
    }
    names = list(runs)
    ratios = {"one/dask": [], "one/jobs": []}
    for r in range(a.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        seconds, tables = {}, {}
        for name in order:
            load = os.getloadavg()[0]
            before, workers_before = cpu_seconds(), client.run(cpu_seconds)
            t = time.monotonic()
            tables[name] = runs[name]()
            seconds[name] = time.monotonic() - t
            # CPU of this process and of each worker process (a restarted worker would lose
            # its count; none is restarted here)
            after, workers_after = cpu_seconds(), client.run(cpu_seconds)
            workers = {w: [c - b for c, b in zip(workers_after[w], workers_before[w])]
                       for w in workers_after}
            user = after[0] - before[0] + sum(u for u, _ in workers.values())
            system = after[1] - before[1] + sum(s for _, s in workers.values())
            split = " + ".join(f"{u:.2f}" for u, _ in workers.values())
            print(f"round {r + 1} {name:5s} {seconds[name]:7.2f} s wall, {user:7.2f} s user "
                  f"+ {system:5.2f} s sys CPU (workers' user {split}; load {load:.2f} -> "
                  f"{os.getloadavg()[0]:.2f})", flush=True)
        if not (tables["dask"].equals(tables["one"]) and tables["jobs"].equals(tables["one"])):
            raise SystemExit("the tables differ")
        ratios["one/dask"].append(seconds["one"] / seconds["dask"])
        ratios["one/jobs"].append(seconds["one"] / seconds["jobs"])
        print(f"round {r + 1}: one/dask {ratios['one/dask'][-1]:.2f}, "
              f"one/jobs {ratios['one/jobs'][-1]:.2f}; tables equal", flush=True)
    for key, values in ratios.items():
        print(f"{key}: median {statistics.median(values):.2f} "
              f"(rounds {', '.join(f'{v:.2f}' for v in values)})")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
