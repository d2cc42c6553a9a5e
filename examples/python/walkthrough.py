#!/usr/bin/python3
"""ropesim from Python, top to bottom (docs/PYTHON.md): run it as

    PYTHONPATH=build/python /usr/bin/python3 examples/python/walkthrough.py [--out DIR] [--quick]

1. the realised bf16 rotation table of a real model (Llama 3 8B's RoPE: data/models.json,
   from its config.json) as numpy arrays;
2. its error against the exact rotation (the r1 table in fp64: cos and sin of the exact angle,
   correctly rounded into binary64), in bf16 ulps;
3. the census of the same positions: how many distinct rotations the table holds;
4. the certified look-back horizon of the Y^k head, fp16 against bf16;
5. a compiled LTL[P,MOD] model's accuracy against word length;
and draws the four panels into DIR/walkthrough.png (matplotlib, Agg backend; no display
needed). --quick uses fewer positions and words (what scripts/test runs).
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import ropesim  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--out", default="walkthrough-out", help="directory for the figure")
parser.add_argument("--quick", action="store_true", help="fewer positions and words")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)

MODEL, START = "llama3-8b", 8192
POSITIONS = 2048 if args.quick else 16384

# 1. The realised table: what a bf16 model's Hugging Face code holds in its cos/sin cache.
cos, sin = ropesim.rotation_table(MODEL, "hf", "bf16", positions=POSITIONS, start=START)
print(f"1. {MODEL} hf bf16: table of {cos.shape[0]} positions x {cos.shape[1]} blocks "
      f"(positions {START}..{START + POSITIONS - 1})")

# 2. Against the exact rotation: r1 at fp64 is cos/sin of the exact angle rounded once into
#    binary64, far below a bf16 ulp. Error in bf16 ulps of the exact value.
exact_cos, exact_sin = ropesim.rotation_table(MODEL, "r1", "fp64", positions=POSITIONS,
                                              start=START)
ulp = np.ldexp(1.0, np.frexp(np.abs(exact_cos))[1] - 8)  # bf16: 8 bits, ulp = 2^(e-8)
cos_error_ulps = (cos - exact_cos) / ulp
worst = np.abs(cos_error_ulps).max(axis=0)
print(f"2. cos error: median {np.median(np.abs(cos_error_ulps)):.3f} ulp, worst block "
      f"{int(worst.argmax())} with {worst.max():.1f} ulp of the exact value (near a zero of cos,"
      f" where the ulp is small); largest absolute error {np.abs(cos - exact_cos).max():.2e}"
      " (the angle is formed in fp32)")

# 3. The census of the same window: distinct realised rotations, per block.
census = ropesim.census(MODEL, "hf", "bf16", positions=POSITIONS, start=START)
rows = np.unique(np.concatenate([cos, sin], axis=1).view(np.uint64), axis=0)
assert len(rows) == census["distinct"], (len(rows), census["distinct"])
print(f"3. census: {census['distinct']} distinct rotations (the table's distinct rows: "
      f"{len(rows)}), periodic: {census['periodic']}")

# 4. The certified horizon of the Y^k head (g = 1) in bf16, fp16 and fp32.
ks = [1, 2, 4] if args.quick else [1, 2, 4, 8]
horizon = {f: [ropesim.horizon(k=k, g=1, format=f)["n_max"] for k in ks] for f in ("bf16", "fp16", "fp32")}
for f, n in horizon.items():
    print(f"4. horizon {f}: N_max^(k) for k = {ks}: {n}")

# 5. A compiled model's accuracy against length: 'Y a' (the previous symbol is a).
lengths = "1..48" if args.quick else "1..200"
experiment = ropesim.experiment_length("Y a", alphabet="ab", lengths=lengths,
                                       formats=["fp16", "bf16"], words=10 if args.quick else 40)
table = experiment["table"]
print("5. accuracy of 'Y a' by format: " + ", ".join(
    f"{f} {g['accuracy'].min():.2f}..{g['accuracy'].max():.2f}"
    for f, g in table.groupby("format")))

fig, ax = plt.subplots(2, 2, figsize=(10, 7))
positions = np.arange(START, START + POSITIONS)
for d in (0, 16, 32):
    ax[0, 0].plot(positions, cos_error_ulps[:, d], lw=0.5, label=f"block {d}")
ax[0, 0].set(title=f"{MODEL} hf bf16: cos error", xlabel="position", ylabel="bf16 ulps")
ax[0, 0].legend()
ax[0, 1].bar(range(len(census["distinct_per_block"])), census["distinct_per_block"])
ax[0, 1].set(title="distinct (cos, sin) per block", xlabel="block", ylabel="count")
for f, n in horizon.items():
    ax[1, 0].plot(ks, [float(v) if v is not None else np.nan for v in n], "o-", label=f)
ax[1, 0].set(title="certified horizon of Y^k (g = 1)", xlabel="k", ylabel="N_max", yscale="log")
ax[1, 0].legend()
for f, g in table.groupby("format"):
    ax[1, 1].plot(g["length"], g["accuracy"], label=f)
ax[1, 1].set(title="'Y a' compiled: accuracy", xlabel="word length", ylabel="accuracy")
ax[1, 1].legend()
fig.tight_layout()
path = os.path.join(args.out, "walkthrough.png")
fig.savefig(path, dpi=100)
print(f"figure: {path}")
