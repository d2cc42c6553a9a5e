"""ropesim.train: the seed paper's controlled experiment, by training (issue 37; docs/TRAINED.md).

RoPE-X (THEORY §8) trained small transformers on words of length ≤ 40 and tested them on
lengths 41–500: periodic RoPE (RoPE_P) generalised on (aa)* and (ab)*, NoPE and conventional
RoPE did not. ``experiment_train`` repeats that design with the PyTorch twin of ropesim's
F-transformer (``ropesim.torch.RopeTransformer``): per (language, schedule, seed) one model is
trained in float32 on balanced words of lengths 1..L_train, then tested at lengths beyond it on
balanced words (members and non-members drawn uniformly per length, exactly as ``experiment
length`` draws them: ``ropesim.balanced_words``), by the float32 twin and **exactly in F** —
the trained weights exported with ``to_model_spec`` and run by ropesim's library
(``_ropesim.run_model``) in bf16, fp16 and fp32. Beside them: ropesim's *constructed* models of
the same languages (``ropesim.experiment_length``) on the same words.

Command line: ``/usr/bin/python3 -m ropesim.train --out DIR [--languages …] [--schedules …]
[--seeds …] [--jobs N] [--paper] [--progress]`` (``--help``); every model's result is a JSON
file in DIR/models/ (reused when the run is repeated: resumable per model), and DIR holds
the table (table.md, results.csv) and the figure (accuracy.svg).
"""
from __future__ import annotations

import argparse
import concurrent.futures as _futures
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable

__all__ = ["LANGUAGES", "SCHEDULES", "TrainConfig", "experiment_train", "train_one",
           "schedule_spec", "summary", "constructed", "main"]


@dataclass(frozen=True)
class Language:
    """A language of the experiment: an LTL[P,MOD] formula (read at N+1, THEORY §4) or a regex
    when it has none, over `alphabet` (letters)."""
    formula: str | None
    regex: str | None
    alphabet: str
    note: str = ""


# The zoo's languages (logic/zoo.cpp) and the two the issue adds (MOD_3, Y^2 a).
LANGUAGES: dict[str, Language] = {
    "(aa)*": Language("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !a)", None, "a",
                      "over {a}: the parity of the length (RoPE-X's reading; over {a, b} the "
                      "balanced non-members nearly all hold a b, and 'no b' scores 1)"),
    "(ab)*": Language("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", None, "ab"),
    "MOD_3": Language("mod(3,1)", None, "ab", "|w| ≡ 0 mod 3"),
    ".*a": Language("Y a", None, "ab", "Σ*a"),
    "a.*": Language("P(a & !P true)", None, "ab", "aΣ*"),
    "PARITY": Language(None, "a*(ba*ba*)*", "ab", "an even number of b; no formula"),
    "Y^2 a": Language("Y^2 a", None, "ab", "the second-to-last letter is a"),
}

# Schedule names → a function of head_dim giving (ropesim schedule spec, realisation); None: NoPE.
SCHEDULES: dict[str, Callable[[int], tuple[str, str] | None]] = {
    "nope": lambda hd: None,
    "periodic": lambda hd: ("periodic:m=" + ",".join(str(m) for m in range(2, hd // 2 + 2)), "r1"),
    "rope-1e4": lambda hd: (f"conventional:base=10000,dim={hd}", "r1"),
    "rope-100": lambda hd: (f"conventional:base=100,dim={hd}", "r1"),
}


def schedule_spec(schedule: str, head_dim: int) -> tuple[str, str] | None:
    """(ropesim schedule spec, realisation) of a schedule name of SCHEDULES for `head_dim`
    (periodic: periods 2, 3, …, head_dim/2 + 1, one per rotary block, angle 2π/m; conventional
    RoPE: θ_d = base^(-2(d-1)/head_dim)), or of a ropesim schedule spec given as is (realisation
    r1). None for NoPE. Raises ValueError for a spec ropesim does not read."""
    if schedule in SCHEDULES:
        return SCHEDULES[schedule](head_dim)
    if ":" not in schedule:
        raise ValueError(f"schedule {schedule!r}: accepted: {', '.join(SCHEDULES)} or a ropesim "
                         f"schedule spec (docs/CLI.md, e.g. periodic:m=2,3,4,5)")
    return schedule, "r1"


@dataclass(frozen=True)
class TrainConfig:
    """The model shape, the training and the test (defaults: ~1 minute a model on one core).

    Shape: `layers`, `d_model`, `heads`, `head_dim` (d_model // heads), FFN `ffn_hidden`
    (2·d_model), post-LN, BOS, strict masking. The paper's shape (``paper()``): 5 layers,
    d_model 64, 8 heads of dim 8. Training: Adam, `steps` steps of `batch` words, learning rate
    `lr`, on `train_words` members and as many non-members per length 1..`train_length` (the
    balanced draw; fewer where a side has fewer words). Test: lengths `train_length`+1 ..
    `test_length` every `test_stride` (and `test_length` itself), `test_words` per side per
    length for the float32 twin; the exact runs in F on every `exact_every`-th of those lengths
    (and the last), the first `exact_words` words of each side. The test words use
    `test_seed` (the same for every model), the training words the model's seed."""
    layers: int = 2
    d_model: int = 16
    heads: int = 2
    head_dim: int = 8
    ffn_hidden: int = 32
    steps: int = 400
    batch: int = 32
    lr: float = 3e-3
    train_length: int = 40
    train_words: int = 16
    test_length: int = 500
    test_stride: int = 7
    test_words: int = 4
    exact_every: int = 1
    exact_words: int = 2
    formats: tuple = ("bf16", "fp16", "fp32")
    test_seed: int = 2026

    @staticmethod
    def paper() -> "TrainConfig":
        """RoPE-X's shape: 5 layers, d_model 64, 8 heads (head_dim 8), FFN 128."""
        return TrainConfig(layers=5, d_model=64, heads=8, head_dim=8, ffn_hidden=128)

    def test_lengths(self) -> list[int]:
        out = list(range(self.train_length + 1, self.test_length + 1, self.test_stride))
        if out[-1] != self.test_length:
            out.append(self.test_length)
        return out

    def exact_lengths(self) -> list[int]:
        lengths = self.test_lengths()
        out = lengths[::self.exact_every]
        if out[-1] != lengths[-1]:
            out.append(lengths[-1])
        return out

    def key(self) -> str:
        """A short hash of every field: a stored result is reused only for the same config."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]


def _check_config(config: TrainConfig) -> None:
    for name in ("layers", "d_model", "heads", "head_dim", "steps", "batch", "train_length",
                 "train_words", "test_length", "test_stride", "test_words", "exact_every",
                 "exact_words"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    if config.test_length <= config.train_length:
        raise ValueError(f"test_length ({config.test_length}) must exceed train_length "
                         f"({config.train_length})")
    if config.head_dim % 2:
        raise ValueError(f"head_dim: must be even (rotary pairs), got {config.head_dim}")
    if isinstance(config.lr, bool) or not isinstance(config.lr, (int, float)) or \
            not 0 < config.lr < math.inf:
        raise ValueError(f"lr: expected a finite number > 0, got {config.lr!r}")
    if isinstance(config.formats, str) or not isinstance(config.formats, (tuple, list)) or \
            not config.formats:
        raise ValueError(f"formats: expected a non-empty tuple of format names, got "
                         f"{config.formats!r}")
    from . import formats
    for fmt in config.formats:
        if not isinstance(fmt, str) or len(formats(fmt)) != 1:  # formats: the CLI's message
            raise ValueError(f"formats: {fmt!r} is not one format (ropesim formats)")


def _language(name: str) -> Language:
    if name not in LANGUAGES:
        raise ValueError(f"language {name!r}; accepted: {', '.join(LANGUAGES)}")
    return LANGUAGES[name]


def _draw(language: Language, lengths, words: int, seed: int) -> list[dict]:
    from . import balanced_words
    if language.formula is not None:
        return balanced_words(lengths, formula=language.formula, alphabet=language.alphabet,
                              words=words, seed=seed)
    return balanced_words(lengths, regex=language.regex, alphabet=language.alphabet,
                          words=words, seed=seed)


def _balanced(rows: list[dict], accepts: Callable[[str], bool]) -> list[dict]:
    """Per length: the balanced accuracy (mean over the non-empty sides of the fraction
    classified right; THEORY §8, as experiment length) of the decisions `accepts(word)`."""
    out = []
    for row in rows:
        sides = []
        for side, want in (("members", True), ("nonmembers", False)):
            if row[side]:
                sides.append(sum(accepts(w) == want for w in row[side]) / len(row[side]))
        out.append({"length": row["length"], "balanced_accuracy": sum(sides) / len(sides),
                    "words": len(row["members"]) + len(row["nonmembers"])})
    return out


def _longest_perfect(rows: list[dict], start: int) -> int:
    """The longest tested length L such that every tested length ≤ L scored 1 (`start` if the
    first did not): RoPE-X's longest perfect length, on the tested grid."""
    best = start
    for row in rows:
        if row["balanced_accuracy"] < 1:
            break
        best = row["length"]
    return best


def train_one(language: str, schedule: str, seed: int, config: TrainConfig = TrainConfig(),
              spec_path: str | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """Trains and tests one model (issue 37 item 2; THEORY §8). The model: a
    ``RopeTransformer`` of `config`'s shape whose every head has `schedule`'s rope (a name of
    SCHEDULES or a ropesim schedule spec), weights seeded by `seed`; trained in float32
    (``ropesim.torch.train``) on the balanced words of lengths 1..train_length drawn with seed
    `seed`; exported with ``to_model_spec`` (to `spec_path` when given); then tested on the
    balanced words of ``config.test_lengths()`` (seed ``config.test_seed``) by the float32 twin
    and, on ``config.exact_lengths()``, exactly in each of ``config.formats`` by ropesim's
    library (the exported spec read at that format: weights rounded once into F, every
    operation in F; THEORY §1–2).

    Returns a dict: the inputs, ``train_seconds``, ``eval_seconds``, ``loss`` (first, last),
    ``train_accuracy`` (twin, balanced, on the training words), and per evaluator (``twin``,
    then each format) ``rows`` (length, balanced_accuracy, words), ``mean_accuracy`` (mean over
    the tested lengths), ``min_accuracy``, ``longest_perfect``, and for the formats
    ``last_word`` (a word of the longest length and ropesim's exact output y on it in that
    format); ``agreement``: the fraction of
    exact-run words on which fp32 and the twin decide alike. Raises ValueError for an unknown
    language or schedule or a bad config.
    """
    import torch
    from . import _ropesim
    from . import torch as rt

    _check_config(config)
    lang = _language(language)
    rope = schedule_spec(schedule, config.head_dim)
    torch.manual_seed(seed)
    model = rt.RopeTransformer(lang.alphabet, d_model=config.d_model, layers=config.layers,
                               heads=config.heads, head_dim=config.head_dim,
                               ffn_hidden=config.ffn_hidden, rope=rope, layer_norm="post",
                               seed=seed)
    train_rows = _draw(lang, list(range(1, config.train_length + 1)), config.train_words, seed)
    words, labels = [], []
    for row in train_rows:
        words += row["members"] + row["nonmembers"]
        labels += [True] * len(row["members"]) + [False] * len(row["nonmembers"])
    say = progress or (lambda text: None)
    start = time.time()
    losses = rt.train(model, words, labels, steps=config.steps, lr=config.lr,
                      batch_size=config.batch, seed=seed)
    train_seconds = time.time() - start
    say(f"trained in {train_seconds:.0f} s, loss {losses[0]:.3g} -> {losses[-1]:.3g}")

    def twin_decisions(rows):
        texts = [w for r in rows for w in r["members"] + r["nonmembers"]]
        with torch.no_grad():
            y = model(texts).tolist() if texts else []
        return dict(zip(texts, (v > 0 for v in y)))

    start = time.time()
    train_decisions = twin_decisions(train_rows)
    test_rows = _draw(lang, config.test_lengths(), config.test_words, config.test_seed)
    decided = {}
    for row in test_rows:  # one length at a time: one batch each
        decided.update(twin_decisions([row]))
    result = {"language": language, "schedule": schedule,
              "rope": None if rope is None else list(rope), "seed": seed,
              "config": asdict(config), "config_key": config.key(),
              "train_seconds": train_seconds, "loss": [losses[0], losses[-1]],
              "train_accuracy": sum(r["balanced_accuracy"] for r in
                                    _balanced(train_rows, train_decisions.__getitem__))
              / len(train_rows),
              "evaluations": {}}

    def summarise(rows):
        return {"rows": rows,
                "mean_accuracy": sum(r["balanced_accuracy"] for r in rows) / len(rows),
                "min_accuracy": min(r["balanced_accuracy"] for r in rows),
                "longest_perfect": _longest_perfect(rows, config.train_length)}

    result["evaluations"]["twin"] = summarise(_balanced(test_rows, decided.__getitem__))
    spec = model.to_spec(format="fp32")
    if spec_path is not None:
        model.to_model_spec(spec_path, format="fp32")
    text = json.dumps(spec)
    exact_set = set(config.exact_lengths())
    exact_rows = [{**row, "members": row["members"][:config.exact_words],
                   "nonmembers": row["nonmembers"][:config.exact_words]}
                  for row in test_rows if row["length"] in exact_set]
    agree = total = 0
    for fmt in config.formats:
        parsed = _ropesim.parse_model(text, format=fmt)
        exact = {w: bool(_ropesim.run_model(parsed, w, False)["accept"])
                 for r in exact_rows for w in r["members"] + r["nonmembers"]}
        result["evaluations"][fmt] = summarise(_balanced(exact_rows, exact.__getitem__))
        last = (exact_rows[-1]["members"] + exact_rows[-1]["nonmembers"])[0]
        result["evaluations"][fmt]["last_word"] = {  # the exact output on one longest word
            "word": last, "output": _ropesim.run_model(parsed, last, False)["output"]}
        if fmt == "fp32":
            agree = sum(exact[w] == decided[w] for w in exact)
            total = len(exact)
        say(f"{fmt}: mean balanced accuracy {result['evaluations'][fmt]['mean_accuracy']:.3f}")
    result["agreement"] = agree / total if total else None
    result["eval_seconds"] = time.time() - start
    result["test_words"] = {"twin": sum(r["words"] for r in result["evaluations"]["twin"]["rows"]),
                            "exact": sum(len(r["members"]) + len(r["nonmembers"])
                                         for r in exact_rows)}
    return result


def _result_path(out: str, language: str, schedule: str, seed: int) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{language}-{schedule}")
    return os.path.join(out, "models", f"{safe}-seed{seed}")


def _write_result(base: str, result: dict) -> None:
    """Writes a model's result to base + ".json" (one space of indent; through a temporary
    file, so a half-written result is never read as a stored one)."""
    tmp = f"{base}.json.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, base + ".json")


def _job(args):
    """One model in a worker process (one torch thread): trains, tests, writes its JSON."""
    language, schedule, seed, config, out = args
    import torch
    torch.set_num_threads(1)
    base = _result_path(out, language, schedule, seed)
    result = train_one(language, schedule, seed, config, spec_path=base + ".spec.json")
    _write_result(base, result)
    return result


def _arguments(languages, schedules, seeds, config) -> tuple[list, list, list]:
    """Checks experiment_train's grid: `config` a TrainConfig with valid fields, `languages`
    keys of LANGUAGES, `schedules` names of SCHEDULES or ropesim specs, `seeds` ints >= 0, each
    list non-empty and without repeats (a str is refused: it would be read letter by
    letter). Returns the three as lists. Raises TypeError or ValueError naming the argument."""
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config: expected a ropesim.train.TrainConfig, got "
                        f"{type(config).__name__}")
    _check_config(config)
    lists = []
    for name, values in (("languages", languages), ("schedules", schedules), ("seeds", seeds)):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"{name}: expected a list, got {type(values).__name__} {values!r}")
        values = list(values)
        if not values:
            raise ValueError("languages, schedules and seeds: give at least one of each")
        repeated = [v for k, v in enumerate(values) if v in values[:k]]
        if repeated:
            raise ValueError(f"{name}: {repeated[0]!r} given twice")
        lists.append(values)
    languages, schedules, seeds = lists
    for name in languages:
        _language(name)
    for s in schedules:
        if not isinstance(s, str):
            raise TypeError(f"schedules: expected names or specs (str), got "
                            f"{type(s).__name__} {s!r}")
        schedule_spec(s, config.head_dim)
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seeds: expected ints, got {type(seed).__name__} {seed!r}")
        if seed < 0:
            raise ValueError(f"seeds: expected ints >= 0, got {seed}")
    return languages, schedules, seeds


def _pending(languages, schedules, seeds, config: TrainConfig, out: str | None, say) -> tuple:
    """The models of the grid (language, then schedule, then seed) split into those to train,
    as (language, schedule, seed) in that order, and the results stored in `out` for the same
    config (read back, marked ``reused``). Creates out/models/."""
    todo, reused = [], []
    if out is not None:
        os.makedirs(os.path.join(out, "models"), exist_ok=True)
    for language in languages:
        for schedule in schedules:
            for seed in seeds:
                path = _result_path(out, language, schedule, seed) + ".json" if out else None
                if path and os.path.exists(path):
                    with open(path, encoding="utf-8") as f:
                        stored = json.load(f)
                    if stored.get("config_key") == config.key():
                        stored["reused"] = True  # in memory only: this run did not make it
                        reused.append(stored)
                        say(f"{language} {schedule} seed {seed}: reused {path}")
                        continue
                todo.append((language, schedule, seed))
    return todo, reused


def _collect(results: list[dict], languages, schedules, seeds) -> tuple:
    """(results in grid order — language, then schedule, then seed —, their ``summary``)."""
    order = {(l, s, d): i for i, (l, s, d) in enumerate(
        (l, s, d) for l in languages for s in schedules for d in seeds)}
    results = sorted(results, key=lambda r: order[(r["language"], r["schedule"], r["seed"])])
    return results, summary(results)


def experiment_train(languages=("MOD_3",), schedules=("nope", "periodic", "rope-1e4"),
                     seeds=(0, 1, 2), config: TrainConfig = TrainConfig(), out: str | None = None,
                     jobs: int = 1, progress: Callable[[str], None] | None = None):
    """The controlled experiment (issue 37 item 2; RoPE-X, THEORY §8): one model per
    (language, schedule, seed), trained and tested by ``train_one``. With `out`, each model's
    result is written to ``out/models/NAME-seedS.json`` (and its spec to ``….spec.json``) and
    a result already there for the same config is reused (resumable per model); `jobs` worker
    processes (each one torch thread), started by ``spawn``: they re-import the calling
    script, which therefore needs an ``if __name__ == "__main__":`` guard when jobs > 1.
    With jobs = 1 the models are trained in this process, on one torch thread (the caller's
    thread count is restored afterwards). `progress(line)` gets a line per model started and
    done. On a Dask cluster: ``ropesim.dask.experiment_train`` (the same results and files).

    Returns (results, table): the list of per-model dicts in grid order (language, then
    schedule, then seed) and the pandas DataFrame ``summary`` makes of them. A result depends
    on its (language, schedule, seed) and `config` alone: the same on 1, 2 or 4 torch threads
    and with torch.use_deterministic_algorithms (measured, docs/SCALE.md), except its wall
    times ``train_seconds`` and ``eval_seconds``. Raises TypeError or ValueError for an
    unknown language or schedule, a bad config, seeds that are not ints >= 0, an empty or
    repeating list, or jobs < 1.
    """
    languages, schedules, seeds = _arguments(languages, schedules, seeds, config)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: expected an int >= 1, got {jobs!r}")
    say = progress or (lambda text: None)
    pending, results = _pending(languages, schedules, seeds, config, out, say)
    todo = [(language, schedule, seed, config, out) for language, schedule, seed in pending]
    n = len(todo)
    if jobs == 1 or n <= 1:
        import torch
        threads = torch.get_num_threads()
        try:
            for k, args in enumerate(todo):
                say(f"[{k + 1}/{n}] {args[0]} {args[1]} seed {args[2]}: training")
                results.append(_job(args) if out else _train_args(args))
                say(_done_line(k + 1, n, results[-1]))
        finally:
            torch.set_num_threads(threads)
    else:
        ctx = multiprocessing.get_context("spawn")
        with _futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [pool.submit(_job if out else _train_args, args) for args in todo]
            for k, fut in enumerate(_futures.as_completed(futures)):
                results.append(fut.result())
                say(_done_line(k + 1, n, results[-1]))
    return _collect(results, languages, schedules, seeds)


def _train_args(args):
    import torch
    torch.set_num_threads(1)
    return train_one(*args[:4])


def _done_line(k: int, n: int, r: dict) -> str:
    ev = r["evaluations"]
    parts = [f"{name} {ev[name]['mean_accuracy']:.3f}" for name in ev]
    return (f"[{k}/{n}] {r['language']} {r['schedule']} seed {r['seed']}: "
            f"{r['train_seconds']:.0f} s training, {r['eval_seconds']:.0f} s testing; "
            f"train {r['train_accuracy']:.3f}; test " + ", ".join(parts))


def summary(results: list[dict]):
    """One row per (language, schedule, evaluator) over the seeds: the mean balanced accuracy
    over the tested lengths (mean, min and max over seeds, and each seed's), the mean longest
    perfect length, the training time. A pandas DataFrame."""
    import pandas
    rows = []
    keys = []
    for r in results:
        for ev in r["evaluations"]:
            if (r["language"], r["schedule"], ev) not in keys:
                keys.append((r["language"], r["schedule"], ev))
    for language, schedule, ev in keys:
        group = [r for r in results if r["language"] == language and r["schedule"] == schedule]
        acc = [r["evaluations"][ev]["mean_accuracy"] for r in group]
        lp = [r["evaluations"][ev]["longest_perfect"] for r in group]
        rows.append({"language": language, "schedule": schedule, "evaluator": ev,
                     "seeds": ",".join(str(r["seed"]) for r in group),
                     "accuracy_mean": sum(acc) / len(acc), "accuracy_min": min(acc),
                     "accuracy_max": max(acc),
                     "accuracy_per_seed": ",".join(f"{a:.3f}" for a in acc),
                     "min_length_accuracy": min(r["evaluations"][ev]["min_accuracy"]
                                                for r in group),
                     "longest_perfect_mean": sum(lp) / len(lp),
                     "train_accuracy_mean": sum(r["train_accuracy"] for r in group) / len(group),
                     "train_seconds_mean": sum(r["train_seconds"] for r in group) / len(group)})
    return pandas.DataFrame(rows)


def constructed(language: str, schedules, config: TrainConfig = TrainConfig()) -> list[dict]:
    """ropesim's constructed models of `language` (``ropesim.experiment_length``: the formula
    compiled per schedule and format, THEORY §7) on the words the trained models' exact runs
    use (``config.exact_lengths()``, ``exact_words`` per side, seed ``test_seed``; no
    offset-aliasing words). One dict per (schedule, format): schedule, evaluator (the format),
    mean_accuracy, min_accuracy, longest_perfect, or ``refused`` with the compiler's reason.
    NoPE and languages without a formula have no construction: left out."""
    from . import experiment_length
    lang = _language(language)
    if lang.formula is None:
        return []
    lengths = config.exact_lengths()
    specs = [(s, schedule_spec(s, config.head_dim)) for s in schedules]
    specs = [(s, r) for s, r in specs if r is not None]
    if not specs:
        return []
    result = experiment_length(lang.formula, alphabet=lang.alphabet,
                               lengths=",".join(str(n) for n in lengths),
                               schedules=[r[0] for _, r in specs], formats=list(config.formats),
                               words=config.exact_words, seed=config.test_seed, adversarial=0)
    out = []
    for k, series in enumerate(result["series"]):  # schedules outer, formats inner
        row = {"language": language, "schedule": specs[k // len(config.formats)][0],
               "evaluator": series["format"]}
        rows = [x for x in result["rows"] if x["schedule"] == series["schedule"]
                and x["format"] == series["format"]]
        if series.get("refused") or not rows:
            row["refused"] = series.get("refused") or "no rows"
        else:
            acc = [x["balanced_accuracy"] for x in rows]
            row.update({"mean_accuracy": sum(acc) / len(acc), "min_accuracy": min(acc),
                        "longest_perfect": _longest_perfect(
                            [{"length": x["length"], "balanced_accuracy": x["balanced_accuracy"]}
                             for x in rows], config.train_length)})
        out.append(row)
    return out


# RoPE-X's reported numbers (THEORY §8), for the table.
PAPER = {("(aa)*", "periodic"): "1.00", ("(aa)*", "nope"): "0.50",
         ("(ab)*", "periodic"): "1.00", ("(ab)*", "nope"): "0.96",
         ("(aa)*", "rope-1e4"): "does not generalise", ("(ab)*", "rope-1e4"): "does not generalise",
         (".*a", "rope-1e4"): "longest perfect 45.5", ("a.*", "rope-1e4"): "longest perfect 146.9",
         ("a.*", "nope"): "longest perfect 470.5"}


def markdown(table, built: list[dict], config: TrainConfig, seconds: float | None = None,
             reused: int = 0, models: int = 0) -> str:
    """The table of ``summary`` (trained) and ``constructed`` rows as Markdown; `seconds`: the
    run's wall time, `reused` of its `models` models read from an earlier run's files."""
    lines = [f"Trained: {config.layers} layers, d_model {config.d_model}, {config.heads} heads of "
             f"dim {config.head_dim}, FFN {config.ffn_hidden}, post-LN; {config.steps} Adam steps "
             f"(batch {config.batch}, lr {config.lr}) on lengths 1..{config.train_length} "
             f"({config.train_words} words per side and length). Test: lengths "
             f"{config.train_length + 1}..{config.test_length} every {config.test_stride} and "
             f"{config.test_length} ({len(config.test_lengths())} lengths), {config.test_words} "
             f"words per side (twin, float32); exactly in F on {len(config.exact_lengths())} of "
             f"them, {config.exact_words} words per side; test seed {config.test_seed}.", "",
             "| language | schedule | evaluated by | mean balanced accuracy (seeds: min–max) | "
             "per seed | worst length | mean longest perfect length | RoPE-X |",
             "|---|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        paper = PAPER.get((r["language"], r["schedule"]), "") if r["evaluator"] == "twin" else ""
        lines.append(f"| {r['language']} | {r['schedule']} | trained, "
                     f"{'float32 twin' if r['evaluator'] == 'twin' else 'exact ' + r['evaluator']}"
                     f" | {r['accuracy_mean']:.3f} ({r['accuracy_min']:.3f}–"
                     f"{r['accuracy_max']:.3f}) | {r['accuracy_per_seed']} | "
                     f"{r['min_length_accuracy']:.3f} | {r['longest_perfect_mean']:.1f} | "
                     f"{paper} |")
    for b in built:
        if "refused" in b:
            reason = b["refused"].split(": ", 1)[-1].split(";")[0]
            lines.append(f"| {b['language']} | {b['schedule']} | constructed, exact "
                         f"{b['evaluator']} | refused: {reason} | | | | |")
        else:
            lines.append(f"| {b['language']} | {b['schedule']} | constructed, exact "
                         f"{b['evaluator']} | {b['mean_accuracy']:.3f} | | "
                         f"{b['min_accuracy']:.3f} | {b['longest_perfect']:.1f} | |")
    if seconds is not None:
        lines += ["", f"Wall time of this run: {seconds:.0f} s" + (
            f" ({reused} of the {models} models reused from an earlier run)." if reused else ".")]
    return "\n".join(lines) + "\n"


def figure(results: list[dict], path: str, window: int = 6) -> None:
    """Balanced accuracy against length, one panel per language, one line per schedule: the
    float32 twin (lines) and the exact fp32 runs (markers), each the mean over seeds and over
    windows of `window` consecutive tested lengths (with the default stride 7 ≡ 1 mod 6, six
    consecutive tested lengths hold every residue mod 2 and mod 3 once, so a window's mean is
    not decided by which residues it happens to hold; a shorter last window joins the one
    before), plotted at the window's mean length.
    SVG or PNG by the suffix of `path`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    languages = list(dict.fromkeys(r["language"] for r in results))
    fig, axes = plt.subplots(1, len(languages), figsize=(5 * len(languages), 3.6), squeeze=False)
    for ax, language in zip(axes[0], languages):
        schedules = list(dict.fromkeys(r["schedule"] for r in results
                                       if r["language"] == language))
        for k, schedule in enumerate(schedules):
            group = [r for r in results if r["language"] == language
                     and r["schedule"] == schedule]
            for ev, style in (("twin", "-"), ("fp32", "o")):
                if ev not in group[0]["evaluations"]:
                    continue
                rows = [g["evaluations"][ev]["rows"] for g in group]
                xs, ys = [], []
                n = len(rows[0])
                starts = list(range(0, n, window))
                if len(starts) > 1 and n % window:  # a short last window joins the one before
                    starts.pop()
                for start, stop in zip(starts, starts[1:] + [n]):
                    part = [row[start:stop] for row in rows]
                    xs.append(sum(x["length"] for x in part[0]) / len(part[0]))
                    ys.append(sum(x["balanced_accuracy"] for p in part for x in p)
                              / sum(len(p) for p in part))
                label = f"{schedule} (twin)" if ev == "twin" else f"{schedule} (exact fp32)"
                ax.plot(xs, ys, style, color=f"C{k}", label=label, markersize=4, linewidth=1,
                        fillstyle="none")
        ax.set_title(f"{language}: trained on lengths ≤ "
                     f"{results[0]['config']['train_length']}, {len(group)} seeds", fontsize=10)
        ax.set_xlabel(f"word length (mean of {window} tested lengths)")
        ax.set_ylabel("balanced accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    """The command line (``python3 -m ropesim.train --help``). Bad arguments: one line on
    stderr, exit 2."""
    parser = argparse.ArgumentParser(
        prog="python3 -m ropesim.train",
        description="RoPE-X's controlled experiment by training (docs/TRAINED.md): train small "
                    "models per language, schedule and seed on short words, test them on long "
                    "ones by the float32 twin and exactly in bf16/fp16/fp32.")
    parser.add_argument("--out", required=True, help="the output directory (resumable)")
    parser.add_argument("--languages", default="MOD_3",
                        help=f"comma-separated; accepted: {', '.join(LANGUAGES)}")
    parser.add_argument("--schedules", default="nope,periodic,rope-1e4",
                        help=f"names ({', '.join(SCHEDULES)}) or ropesim schedule specs, "
                             "split as `ropesim sweep --schedules` splits them: on ';' and on "
                             "the commas that start a new spec, so "
                             "'nope,conventional:base=10000,dim=8' is two")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated ints")
    parser.add_argument("--jobs", default="1", help="worker processes (one thread each)")
    parser.add_argument("--paper", action="store_true",
                        help="RoPE-X's shape: 5 layers, d_model 64, 8 heads (slow)")
    parser.add_argument("--steps", default=None, help="Adam steps (default 400)")
    parser.add_argument("--progress", action="store_true", help="a line per model on stderr")
    parser.add_argument("--no-constructed", action="store_true",
                        help="leave out ropesim's constructed models")

    class Exit(Exception):
        pass

    def fail(message):
        print(f"ropesim.train: {message}", file=sys.stderr)
        raise Exit()

    parser.error = lambda message: fail(message)  # one line, exit 2
    from . import _ropesim
    try:
        args = parser.parse_args(argv)
        languages = [s.strip() for s in args.languages.split(",") if s.strip()]
        try:  # split as `ropesim sweep --schedules` splits (numeric::split_unique)
            schedules = [s.strip() for s in _ropesim.split_schedules(args.schedules,
                                                                     "--schedules")]
        except ValueError as e:
            fail(str(e))

        def integer(flag, text):  # one value of --seeds, --jobs or --steps
            try:
                return int(text)
            except ValueError:
                fail(f"{flag}: {text!r} is not an integer")

        seeds = [integer("--seeds", v) for v in args.seeds.split(",")]
        jobs = integer("--jobs", args.jobs)
        steps = integer("--steps", args.steps) if args.steps is not None else None
        config = TrainConfig.paper() if args.paper else TrainConfig()
        if steps is not None:
            config = replace(config, steps=steps)
        try:
            _check_config(config)
            # the grid as experiment_train checks it (unknown names, repeated seeds, ...)
            languages, schedules, seeds = _arguments(languages, schedules, seeds, config)
            if jobs < 1:
                raise ValueError(f"--jobs: expected an int >= 1, got {jobs}")
        except (TypeError, ValueError) as e:
            message = str(e)
            fail("--" + message if message.startswith(("languages:", "schedules:", "seeds:"))
                 else message)
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            fail(f"--out: {args.out!r} is not a directory; accepted: a directory (made if "
                 f"missing)")
    except Exit:
        return 2
    try:
        return _run(args, languages, schedules, seeds, config, jobs)
    except OSError as e:  # a write failure: one line naming the file, exit 2
        where = e.filename if e.filename is not None else args.out
        print(f"ropesim.train: --out: cannot write {where!r}: {e.strerror or e}",
              file=sys.stderr)
        return 2


def _run(args, languages, schedules, seeds, config, jobs) -> int:
    """main's run once its arguments are checked: the grid trained, the files written."""
    progress = (lambda line: print(line, file=sys.stderr, flush=True)) if args.progress else None
    start = time.time()
    results, table = experiment_train(languages, schedules, seeds, config, args.out, jobs,
                                      progress)
    built = [] if args.no_constructed else [b for lang in languages
                                            for b in constructed(lang, schedules, config)]
    seconds = time.time() - start
    table.to_csv(os.path.join(args.out, "results.csv"), index=False)
    text = markdown(table, built, config, seconds, sum(bool(r.get("reused")) for r in results),
                    len(results))
    with open(os.path.join(args.out, "table.md"), "w", encoding="utf-8") as f:
        f.write(text)
    figure(results, os.path.join(args.out, "accuracy.svg"))
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
