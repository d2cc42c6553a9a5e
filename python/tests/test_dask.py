"""ropesim.dask (docs/SCALE.md) on a real Dask cluster of two worker processes: the table and the
file of ropesim.dask.sweep equal those of one process (ropesim.sweep, `ropesim sweep --out`), also
when a worker process is killed while it computes a shard; and the same kill under
table_horizon (its table and file) and experiment_train (its results and model files)."""
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


def two_workers():
    """A client of a new LocalCluster of two one-thread worker processes (a context manager)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)

    class Both:
        def __enter__(self):
            return client

        def __exit__(self, *exc):
            client.close()
            cluster.close()

    return Both()


@pytest.fixture(scope="module")
def client():
    """One cluster for the tests that kill no worker."""
    with two_workers() as c:
        yield c


@pytest.fixture
def killable():
    """A cluster of its own for each test that kills a worker: a killed worker's nanny starts a
    new process, but when it comes back is not ours to wait for (on a loaded CI machine one did
    not come back within 60 s, stop 44), so no test depends on an earlier test's restart."""
    with two_workers() as c:
        c.wait_for_workers(2, timeout=120)
        yield c


def cli_file(binary, path, flags=GRID_FLAGS, command=("sweep",)):
    """The bytes `ropesim COMMAND FLAGS --out PATH` writes (at PATH: the path is in the file)."""
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([binary, *command, *flags, "--out", path], check=True,
                   capture_output=True)
    with open(path, "rb") as f:
        return f.read()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_dask_sweep_equals_one_process(client, ropesim_binary, tmp_path):
    path = str(tmp_path / "sweep.csv")
    table = ropesim.dask.sweep(client, shards=4, out=path, **GRID)
    ours = read(path)
    assert table.equals(ropesim.sweep(**GRID))
    assert len(table) == 12
    assert ours == cli_file(ropesim_binary, path)
    # more shards than rows: the empty shards add nothing
    assert ropesim.dask.sweep(client, shards=20, **GRID).equals(table)


def kill_a_worker_during(client, command, compute):
    """Runs compute() (a ropesim.dask call submitting tasks ropesim-COMMAND-…) in a thread;
    as soon as one of its tasks runs on a worker, waits 0.3 s (the task has started: one
    thread per worker) and kills that worker's process (SIGKILL). Returns compute()'s result,
    after checking that the killed worker's task was sent to a worker again (its scheduler
    story shows it 'processing' twice) and that the nanny started a new worker process."""
    pids = client.run(os.getpid)  # worker address -> its process id
    outcome = {}

    def run():
        try:
            outcome["result"] = compute()
        except BaseException as e:  # reported by the assertion below
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    victim, keys, deadline = None, [], time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        for address, processing in client.processing().items():
            ours = [k for k in processing if str(k).startswith(f"ropesim-{command}-")]
            if ours and address in pids:
                victim, keys = address, ours
                break
        time.sleep(0.02)
    assert victim is not None, f"no {command} task was seen running on a worker"
    time.sleep(0.3)
    os.kill(pids[victim], signal.SIGKILL)
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert "error" not in outcome, outcome.get("error")
    stories = client.run_on_scheduler(
        lambda dask_scheduler: [list(dask_scheduler.story(k)) for k in keys])
    assert any(sum(1 for t in s if t[2] == "processing") >= 2 for s in stories), stories
    assert pids[victim] not in client.run(os.getpid).values()
    return outcome["result"]


def test_dask_sweep_survives_a_killed_worker(killable, ropesim_binary, tmp_path):
    client = killable
    path = str(tmp_path / "sweep.json")
    table = kill_a_worker_during(
        client, "sweep", lambda: ropesim.dask.sweep(client, shards=4, out=path, **KILL_GRID))
    ours = read(path)
    assert table.equals(ropesim.sweep(**KILL_GRID))
    assert ours == cli_file(ropesim_binary, path, KILL_FLAGS)


# 2 formats x 3 k = 6 horizon cells of 0.4-0.5 s each on one thread here (the candidate
# algorithm), 3 a shard: a shard is one format
KILL_HORIZON = dict(formats="p=29..30,e=11", k="1,2,4")


def test_dask_table_horizon_survives_a_killed_worker(killable, tmp_path):
    client = killable
    path = str(tmp_path / "horizon.csv")
    table = kill_a_worker_during(
        client, "table-horizon",
        lambda: ropesim.dask.table_horizon(client, shards=2, out=path, **KILL_HORIZON))
    ours = read(path)
    os.remove(path)
    # one process, writing the same path (the path is in the file): the bytes of `ropesim
    # table horizon … --out` (test_dask_commands.py compares the two writers)
    assert table.equals(ropesim.table_horizon(out=path, **KILL_HORIZON))
    assert ours == read(path)
    assert list(table["k"]) == [1, 2, 4] * 2


def test_dask_experiment_train_survives_a_killed_worker(killable, tmp_path):
    client = killable
    torch = pytest.importorskip("torch")
    import ropesim.train as tr
    # two models of about 1 s each on one thread here (the default shape, 15 steps, short
    # words), after the worker's first import of torch (1-3 s)
    config = tr.TrainConfig(steps=15, batch=16, train_length=8, train_words=4, test_length=20,
                            test_stride=4, formats=("fp32",))
    grid = dict(languages=["MOD_3"], schedules=["periodic"], seeds=[0, 1], config=config)
    results, table = kill_a_worker_during(
        client, "experiment-train",
        lambda: ropesim.dask.experiment_train(client, out=str(tmp_path / "dask"), **grid))
    threads = torch.get_num_threads()
    single, single_table = tr.experiment_train(out=str(tmp_path / "one"), **grid)
    assert torch.get_num_threads() == threads  # restored after its one-thread run
    assert strip_times(results) == strip_times(single)
    assert table.drop(columns="train_seconds_mean").equals(
        single_table.drop(columns="train_seconds_mean"))
    assert same_model_files(tmp_path / "dask", tmp_path / "one") == 4


TIMES = ("train_seconds", "eval_seconds")  # the only wall-clock figures of a model's result


def strip_times(results):
    return [{k: v for k, v in r.items() if k not in TIMES} for r in results]


def same_model_files(ours, theirs):
    """Asserts that the directories' models/ hold the same files: each spec byte for byte,
    each result JSON the same once its wall times are taken out (its other values and their
    order: both are dumped again the same way). Returns how many files."""
    import json
    names = sorted(os.listdir(os.path.join(ours, "models")))
    assert names == sorted(os.listdir(os.path.join(theirs, "models")))
    for name in names:
        a, b = (read(os.path.join(d, "models", name)) for d in (ours, theirs))
        if name.endswith(".spec.json"):
            assert a == b, name
        else:
            a, b = (json.loads(x) for x in (a, b))
            assert json.dumps(strip_times([a])) == json.dumps(strip_times([b])), name
    return len(names)


def test_dask_sweep_refuses_bad_input_before_submitting(client):
    # the keys the scheduler holds now (an earlier test's released keys may not be gone yet)
    before = set(client.who_has())
    with pytest.raises(ValueError, match="--formats"):
        ropesim.dask.sweep(client, shards=2, formats="bf17", models="phi-2")
    with pytest.raises(TypeError, match="unexpected argument 'shard'"):
        ropesim.dask.sweep(client, shards=2, shard=(1, 2), models="phi-2")
    with pytest.raises(ValueError, match="shards: must be at least 1"):
        ropesim.dask.sweep(client, shards=0, models="phi-2")
    assert not set(client.who_has()) - before  # nothing was submitted
