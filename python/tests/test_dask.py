"""ropesim.dask (docs/SCALE.md) on a real Dask cluster of two worker processes: the table and the
file of ropesim.dask.sweep equal those of one process (ropesim.sweep, `ropesim sweep --out`), also
when a worker process is killed while it computes a shard."""
import logging
import os
import signal
import subprocess
import threading
import time

import pytest

dask = pytest.importorskip("dask", reason="python3-dask is not installed (scripts/setup)")
distributed = pytest.importorskip(
    "distributed", reason="python3-distributed is not installed (scripts/setup)")

import ropesim  # noqa: E402
import ropesim.dask  # noqa: E402

# Debian's tornado 6.2 under distributed 2022.12 warns about its own event loop set-up
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")

# 3 schedules x 2 realizations x 2 formats = 12 rows in 4 shards of 3 rows (shards cut
# schedules): 1.8 s of one thread in all here.
GRID = dict(models="llama2-7b,gemma-7b,phi-2", realizations="r1,r2", formats="bf16,fp16",
            positions=8192)
GRID_FLAGS = ["--models", "llama2-7b,gemma-7b,phi-2", "--formats", "bf16,fp16",
              "--realizations", "r1,r2", "--positions", "8192"]


# For the kill: 4 cells of equal cost (r2 at fp32 on four schedules of 64 blocks), one a shard,
# about 1.5 s each on one thread here, so that a worker is killed inside a task.
KILL_GRID = dict(schedules=";".join(f"conventional:base={b},dim=128"
                                    for b in (10000, 20000, 40000, 80000)),
                 realizations="r2", formats="fp32", positions=49152)
KILL_FLAGS = ["--schedules", KILL_GRID["schedules"], "--formats", "fp32", "--realizations", "r2",
              "--positions", "49152"]


@pytest.fixture
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    with cluster, distributed.Client(cluster) as c:
        yield c


def cli_file(binary, path, flags=GRID_FLAGS):
    """The bytes `ropesim sweep FLAGS --out PATH` writes (at PATH: the path is in the file)."""
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([binary, "sweep", *flags, "--out", path], check=True,
                   capture_output=True)
    with open(path, "rb") as f:
        return f.read()


def test_dask_sweep_equals_one_process(client, ropesim_binary, tmp_path):
    path = str(tmp_path / "sweep.csv")
    table = ropesim.dask.sweep(client, shards=4, out=path, **GRID)
    with open(path, "rb") as f:
        ours = f.read()
    assert table.equals(ropesim.sweep(**GRID))
    assert len(table) == 12
    assert ours == cli_file(ropesim_binary, path)
    # more shards than rows: the empty shards add nothing
    assert ropesim.dask.sweep(client, shards=20, **GRID).equals(table)


def test_dask_sweep_survives_a_killed_worker(client, ropesim_binary, tmp_path):
    path = str(tmp_path / "sweep.json")
    pids = client.run(os.getpid)  # worker address -> its process id
    outcome = {}

    def run():
        try:
            outcome["table"] = ropesim.dask.sweep(client, shards=4, out=path, **KILL_GRID)
        except BaseException as e:  # reported by the assertion below
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    victim, keys, deadline = None, [], time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        for address, processing in client.processing().items():
            ours = [k for k in processing if str(k).startswith("ropesim-sweep-")]
            if ours and address in pids:
                victim, keys = address, ours
                break
        time.sleep(0.02)
    assert victim is not None, "no sweep task was seen running on a worker"
    time.sleep(0.3)  # the worker's first task has started (one thread per worker)
    os.kill(pids[victim], signal.SIGKILL)
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert "error" not in outcome, outcome.get("error")
    # the task of the killed worker was sent to a worker again (its scheduler story shows it
    # 'processing' twice), and the nanny started a new worker process
    stories = client.run_on_scheduler(
        lambda dask_scheduler: [list(dask_scheduler.story(k)) for k in keys])
    assert any(sum(1 for t in s if t[2] == "processing") >= 2 for s in stories), stories
    assert pids[victim] not in client.run(os.getpid).values()
    with open(path, "rb") as f:
        ours = f.read()
    assert outcome["table"].equals(ropesim.sweep(**KILL_GRID))
    assert ours == cli_file(ropesim_binary, path, KILL_FLAGS)


def test_dask_sweep_refuses_bad_input_before_submitting(client):
    with pytest.raises(ValueError, match="--formats"):
        ropesim.dask.sweep(client, shards=2, formats="bf17", models="phi-2")
    with pytest.raises(TypeError, match="unexpected argument 'shard'"):
        ropesim.dask.sweep(client, shards=2, shard=(1, 2), models="phi-2")
    with pytest.raises(ValueError, match="shards: must be at least 1"):
        ropesim.dask.sweep(client, shards=0, models="phi-2")
    assert not client.who_has()  # nothing was submitted
