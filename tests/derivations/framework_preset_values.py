#!/usr/bin/env python3
"""Hand-derivation helper for the expected values in tests/attention/test_framework_presets.cpp.

It shares nothing with ropesim: every step of a framework preset (attention/realisations/framework_presets.cpp,
docs/FRAMEWORKS.md) is recomputed here from its definition. Exact rationals (fractions.Fraction)
for products, quotients and conversions; pow, cos and sin by mpmath at 400 bits, whose result is
then rounded like an exact value (a value within 2^-200 relative of a rounding boundary is
refused, so the 400-bit approximation rounds as the exact real would). Rounding is
nearest-even into (p, emin, emax) with IEEE overflow to inf (|x| >= (2 - 2^-p)·2^emax).

Run: python3 tests/derivations/framework_preset_values.py
"""
from fractions import Fraction
import math

import mpmath

mpmath.mp.prec = 400

FORMATS = {  # p incl. hidden bit, emin, emax
    "fp32": (24, -126, 127), "tf32": (11, -126, 127), "fp16": (11, -14, 15),
    "bf16": (8, -126, 127),
}
INF = float("inf")


def fraction_of(x):
    """The exact rational value of an mpmath number (man_exp drops the sign: use _mpf_)."""
    sign, m, e, _ = mpmath.mpf(x)._mpf_
    m = -m if sign else m
    return Fraction(m) * (Fraction(2) ** e) if e >= 0 else Fraction(m, 2 ** (-e))


def rnd(fmt, x, mode="nearest"):
    """x (Fraction or mpf) rounded into fmt, nearest-even or "upward" (toward +inf); returns a
    Fraction or +-inf (nearest: IEEE overflow to inf; upward: not needed beyond max, refused)."""
    p, emin, emax = FORMATS[fmt]
    approx = not isinstance(x, (Fraction, int))
    q = fraction_of(x) if approx else Fraction(x)
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    while Fraction(2) ** e > a:  # fix float log2 inaccuracy
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - p + 1)
    n = a / quantum
    fl = n.numerator // n.denominator
    frac = n - fl
    if mode == "nearest":
        if approx and abs(frac - Fraction(1, 2)) < Fraction(1, 2 ** 200) * n:
            raise ValueError("too close to a rounding boundary")
        if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl % 2 == 1):
            fl += 1
    else:  # upward: magnitude up for positive x, down (truncate) for negative x
        if approx and (frac < Fraction(1, 2 ** 200) * n or 1 - frac < Fraction(1, 2 ** 200) * n):
            raise ValueError("too close to a rounding boundary")
        if frac != 0 and sign > 0:
            fl += 1
    r = fl * quantum
    if r >= (2 - Fraction(1, 2 ** (p - 1))) * Fraction(2) ** emax:  # beyond max finite
        if mode != "nearest":
            raise ValueError("upward overflow not needed here")
        return sign * INF
    return sign * r


def mp(q):
    return mpmath.mpf(q.numerator) / q.denominator


def show(name, q):
    if isinstance(q, float):
        print(f"  {name:10s} = {q}")
        return
    print(f"  {name:10s} = {float(q)!r:>24}  exact {q.numerator}/{q.denominator}")


def product_pipeline(beta, dim, k, i, operands=None):
    """hf-cpu / vllm / megatron / flash-attn up to cos/sin: fp32 steps, product recipe."""
    e = rnd("fp32", Fraction(2 * k, dim))           # fp32(fp32(2k)/fp32(D)); 2k, D exact
    p = rnd("fp32", mpmath.power(mp(rnd("fp32", Fraction(beta))), mp(e)))
    inv = rnd("fp32", 1 / p)
    t = rnd("fp32", Fraction(i))
    if operands:
        inv_op, t_op = rnd(operands, inv), rnd(operands, t)
    else:
        inv_op, t_op = inv, t
    angle = rnd("fp32", inv_op * t_op)
    c = rnd("fp32", mpmath.cos(mp(angle)))
    s = rnd("fp32", mpmath.sin(mp(angle)))
    return dict(exponent=e, power=p, inv_freq=inv, t=t, angle=angle, cos_fp=c, sin_fp=s)


def section(title):
    print()
    print(title)


section("hf-cpu = hf-cuda, A = bf16, conventional:base=500000,dim=128, position 4097, block 3")
v = product_pipeline(500000, 128, 3, 4097)
for key, q in v.items():
    show(key, q)
show("cos (bf16)", rnd("bf16", v["cos_fp"]))
show("sin (bf16)", rnd("bf16", v["sin_fp"]))

section("hf-cuda-tf32: same, GEMM operands rounded to tf32")
w = product_pipeline(500000, 128, 3, 4097, operands="tf32")
show("inv_freq tf32", rnd("tf32", w["inv_freq"]))
show("t tf32", rnd("tf32", w["t"]))
for key in ("angle", "cos_fp", "sin_fp"):
    show(key, w[key])
show("cos (bf16)", rnd("bf16", w["cos_fp"]))
show("sin (bf16)", rnd("bf16", w["sin_fp"]))

section("vllm (A = fp16) and megatron (A = bf16): conventional:base=10000,dim=128, position 2008, block 1")
v = product_pipeline(10000, 128, 1, 2008)
for key in ("inv_freq", "angle", "cos_fp", "sin_fp"):
    show(key, v[key])
c16, s16 = rnd("fp16", v["cos_fp"]), rnd("fp16", v["sin_fp"])
show("cos fp16", c16)
show("sin fp16", s16)
x0, x1 = rnd("fp16", Fraction(1, 7)), rnd("fp16", Fraction(-35, 9))
show("x0 fp16", x0)
show("x1 fp16", x1)
# vLLM kernel: floats from the fp16 cache and the fp16 input, fp32 arithmetic, one store
y0 = rnd("fp16", rnd("fp32", rnd("fp32", c16 * x0) - rnd("fp32", s16 * x1)))
y1 = rnd("fp16", rnd("fp32", rnd("fp32", s16 * x0) + rnd("fp32", c16 * x1)))
show("vllm y0", y0)
show("vllm y1", y1)
# the same in fp16 throughout with hf eager arithmetic (what an fp16 torch path would give):
# y1 differs, so this case tells the two rotation arithmetics apart
e0 = rnd("fp16", rnd("fp16", x0 * c16) + rnd("fp16", -x1 * s16))
e1 = rnd("fp16", rnd("fp16", x1 * c16) + rnd("fp16", x0 * s16))
show("eager y0", e0)
show("eager y1", e1)
cb, sb = rnd("bf16", v["cos_fp"]), rnd("bf16", v["sin_fp"])
b0, b1 = rnd("bf16", Fraction(1, 7)), rnd("bf16", Fraction(-37, 9))
show("cos bf16", cb)
show("sin bf16", sb)
show("x0 bf16", b0)
show("x1 bf16", b1)
# Megatron unfused: t*cos + rotate_half(t)*sin in bf16, three roundings per element
m0 = rnd("bf16", rnd("bf16", b0 * cb) + rnd("bf16", -b1 * sb))
m1 = rnd("bf16", rnd("bf16", b1 * cb) + rnd("bf16", b0 * sb))
show("megatron y0", m0)
show("megatron y1", m1)
# te-fused: fp32 cos/sin (shared memory, never cast to bf16), fp32 arithmetic, one store
c32, s32 = v["cos_fp"], v["sin_fp"]
show("te y0", rnd("bf16", rnd("fp32", rnd("fp32", c32 * b0) - rnd("fp32", s32 * b1))))
show("te y1", rnd("bf16", rnd("fp32", rnd("fp32", s32 * b0) + rnd("fp32", c32 * b1))))

section("llamacpp-cpu / llamacpp-cuda: conventional:base=10000,dim=128, position 1000, block 8 (k = 8)")
e = rnd("fp32", Fraction(-2, 128))
ts = rnd("fp32", mpmath.power(mpmath.mpf(10000), mp(e)))
show("exponent", e)
show("theta_scale", ts)
theta = rnd("fp32", Fraction(1000))
for _ in range(8):
    theta = rnd("fp32", theta * ts)
show("cpu angle", theta)
show("cpu cos", rnd("fp32", mpmath.cos(mp(theta))))
show("cpu sin", rnd("fp32", mpmath.sin(mp(theta))))
inv = rnd("fp32", ts ** 8)
angle = rnd("fp32", Fraction(1000) * inv)
show("cuda inv", inv)
show("cuda angle", angle)
show("cuda cos", rnd("fp32", mpmath.cos(mp(angle))))
show("cuda sin", rnd("fp32", mpmath.sin(mp(angle))))

section("jax (gemma apply_rope), A = bf16: conventional:base=10000,dim=256, position 3000, block 9")
e = rnd("fp32", Fraction(18, 256))
p = rnd("fp32", mpmath.power(mpmath.mpf(10000), mp(e)))
angle = rnd("fp32", Fraction(3000) / p)
show("exponent", e)
show("power", p)
show("angle", angle)
# the product recipe on the same block, for contrast
inv = rnd("fp32", 1 / p)
show("product angle", rnd("fp32", inv * 3000))
show("cos", rnd("fp32", mpmath.cos(mp(angle))))
show("sin", rnd("fp32", mpmath.sin(mp(angle))))

section("base 1e6, D = 128, inv_freq in fp16 (exponent, power, inv_freq all fp16)")
for style in ("base exact", "base fp16 (Python float converted)", "fp32 then stored fp16"):
    zero_blocks = []
    block1 = None
    for k in range(64):
        if style == "fp32 then stored fp16":
            e = rnd("fp32", Fraction(2 * k, 128))
            p = rnd("fp32", mpmath.power(mpmath.mpf(10) ** 6, mp(e)))
            inv = rnd("fp16", rnd("fp32", 1 / p))
        else:
            e = rnd("fp16", Fraction(2 * k, 128))
            if style == "base exact":
                p = rnd("fp16", mpmath.power(mpmath.mpf(10) ** 6, mp(e))) if e != 0 else Fraction(1)
            else:
                b = rnd("fp16", Fraction(10 ** 6))  # inf
                p = Fraction(1) if e == 0 else b  # inf^0 = 1, inf^e = inf for e > 0
            inv = Fraction(0) if p == INF else rnd("fp16", 1 / p)
        if k == 1:
            block1 = inv
        if k == 63 and style == "fp32 then stored fp16":
            show("block 63", inv)
        if inv == 0:
            zero_blocks.append(k)
    print(f"  {style}: block 1 inv_freq = {float(block1)!r}; zero blocks {zero_blocks[:1]}..{zero_blocks[-1:]}"
          f" ({len(zero_blocks)} blocks)")

section("megatron vs a theory rotation under upward rounding (bf16, base 1e4, D 128, position 2008, block 1)")
# With nearest rounding hf_eager and theory give the same values (rnd(-a) = -rnd(a) and the
# sums commute); upward rounding tells them apart. Every step rounds upward.
U = "upward"
e = rnd("fp32", Fraction(2, 128), U)
p = rnd("fp32", mpmath.power(mpmath.mpf(10000), mp(e)), U)
inv = rnd("fp32", 1 / p, U)
angle = rnd("fp32", inv * 2008, U)
c = rnd("bf16", rnd("fp32", mpmath.cos(mp(angle)), U), U)
sn = rnd("bf16", rnd("fp32", mpmath.sin(mp(angle)), U), U)
x0, x1 = Fraction(73, 512), Fraction(-33, 8)
show("inv_freq", inv)
show("angle", angle)
show("cos bf16", c)
show("sin bf16", sn)
show("eager y0", rnd("bf16", rnd("bf16", x0 * c, U) + rnd("bf16", -x1 * sn, U), U))
show("eager y1", rnd("bf16", rnd("bf16", x1 * c, U) + rnd("bf16", x0 * sn, U), U))
show("theory y0", rnd("bf16", rnd("bf16", c * x0, U) - rnd("bf16", sn * x1, U), U))
show("theory y1", rnd("bf16", rnd("bf16", sn * x0, U) + rnd("bf16", c * x1, U), U))
