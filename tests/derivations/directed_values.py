#!/usr/bin/env python3
"""Hand-derivation helper for the expected values in tests/attention/test_directed_rounding.cpp,
tests/proofs/test_boundaries.cpp and tests/cli/test_cli.cpp (directed rounding cases).

It shares nothing with ropesim: exact rationals (fractions.Fraction) and 90-digit decimals
(decimal.Decimal; pi by Machin's formula, cos/sin by Taylor series after reduction mod 2*pi,
x**y by Decimal's correctly rounded exp/ln). For every value it prints the scaled value
x / quantum (so that floor/ceil are visible: the two neighbours in F are floor*q and
ceil*q) and the element of F chosen by each rounding mode. A value that lies within 1e-60
(relative) of a rounding boundary is refused, so 90 digits are ample.

Run: python3 tests/derivations/directed_values.py
"""
from decimal import Decimal, getcontext
from fractions import Fraction
import math

getcontext().prec = 90
MODES = ["rne", "rna", "rz", "ru", "rd"]

FORMATS = {  # p incl. hidden bit, emin, emax
    "fp16": (11, -14, 15), "bf16": (8, -126, 127), "fp32": (24, -126, 127),
    "fp64": (53, -1022, 1023), "tf32": (11, -126, 127), "fp8e5m2": (3, -14, 15),
    "fp8e4m3": (4, -6, 8),
}


def pi():
    def arctan_inv(n):
        x = Decimal(1) / n
        x2 = x * x
        s, t, k = Decimal(0), x, 0
        while t != 0:
            s += t / (2 * k + 1) * (-1) ** k
            t *= x2
            k += 1
            if k > 400:
                break
        return s
    return 16 * arctan_inv(5) - 4 * arctan_inv(239)


PI = pi()


def cos_sin(x):
    """cos and sin of a Decimal (reduced mod 2*pi first)."""
    x = Decimal(x)
    two_pi = 2 * PI
    k = (x / two_pi).to_integral_value()
    r = x - k * two_pi
    c, s = Decimal(0), Decimal(0)
    term = Decimal(1)
    n = 0
    while True:  # term = r^n / n!
        if n % 4 == 0: c += term
        elif n % 4 == 1: s += term
        elif n % 4 == 2: c -= term
        else: s -= term
        n += 1
        term = term * r / n
        if abs(term) < Decimal(10) ** -85 and n > 5:
            break
    return c, s


def quantum(fmt, mag):
    p, emin, emax = FORMATS[fmt] if isinstance(fmt, str) else fmt
    e = math.floor(math.log2(mag)) if mag > 0 else emin
    # fix log2 floating error
    while Fraction(2) ** e > mag: e -= 1
    while Fraction(2) ** (e + 1) <= mag: e += 1
    return Fraction(2) ** (max(e, emin) - p + 1)


def rnd(fmt, x, mode):
    """Round the real x (Fraction or Decimal, given to 90 digits) into fmt (floating, subnormals
    on, overflow ignored: every case here is far inside the range)."""
    x = Fraction(x) if not isinstance(x, Fraction) else x
    if x == 0:
        return Fraction(0), None
    neg = x < 0
    mag = -x if neg else x
    q = quantum(fmt, mag)
    scaled = mag / q
    lo = math.floor(scaled)
    frac = scaled - lo
    exact_input = isinstance(x, Fraction)
    if frac != 0 and (frac < Fraction(1, 10 ** 60) or 1 - frac < Fraction(1, 10 ** 60)):
        raise ValueError("too close to a boundary")
    if frac == 0:
        k = lo
    elif mode == "rz" or (mode == "rd" and not neg) or (mode == "ru" and neg):
        k = lo
    elif mode in ("ru", "rd"):
        k = lo + 1
    else:
        if frac > Fraction(1, 2): k = lo + 1
        elif frac < Fraction(1, 2): k = lo
        elif mode == "rna": k = lo + 1
        else: k = lo if lo % 2 == 0 else lo + 1
    v = k * q
    return (-v if neg else v), (scaled, q)


def fixed_rnd(F, x, mode):
    x = Fraction(x)
    q = Fraction(1, 2 ** F)
    return rnd((1000, -F + 999, 10), x, mode) if False else _fixed(q, x, mode)


def _fixed(q, x, mode):
    neg = x < 0
    mag = -x if neg else x
    s = mag / q
    lo = math.floor(s)
    fr = s - lo
    if fr == 0: k = lo
    elif mode == "rz" or (mode == "rd" and not neg) or (mode == "ru" and neg): k = lo
    elif mode in ("ru", "rd"): k = lo + 1
    else: k = lo + 1 if fr > Fraction(1, 2) else lo  # no ties in these cases
    v = k * q
    return -v if neg else v


def show(label, fmt, x, modes=MODES):
    xs = Fraction(x) if not isinstance(x, Fraction) else x
    out = []
    for m in modes:
        v, info = rnd(fmt, xs, m)
        out.append(f"{m}={float(v)!r}")
    _, info = rnd(fmt, xs, "rne")
    if info:
        scaled, q = info
        sc = Decimal(scaled.numerator) / Decimal(scaled.denominator)
        print(f"{label}: x = {Decimal(xs.numerator) / Decimal(xs.denominator):.25f}; "
              f"|x|/2^{int(math.log2(q))} = {sc:.12f} -> " + ", ".join(out))
    else:
        print(f"{label}: 0")
    return {m: rnd(fmt, xs, m)[0] for m in modes}


def main():
    print("== r1: single:g=1, cos/sin of 1 and 2 in fp16, bf16, fp32 ==")
    for n in (1, 2):
        c, s = cos_sin(n)
        for f in ("fp16", "bf16", "fp32"):
            show(f"cos({n}) {f}", f, c)
            show(f"sin({n}) {f}", f, s)
    print("== r1/r3: periodic:m=8 (angle k*pi/4), fp16 ==")
    half_sqrt2 = Decimal(2).sqrt() / 2
    show("sqrt(2)/2 fp16", "fp16", half_sqrt2)
    show("-sqrt(2)/2 fp16", "fp16", -half_sqrt2)
    print("== r2: GPT-NeoX block 1 (theta = 10000^(-1/16)) at position 1857, fp16 ==")
    theta = (Decimal(10000).ln() * Decimal(-1) / 16).exp()
    th = show("theta_hat", "fp16", theta)
    for m in MODES:
        phi, _ = rnd("fp16", th[m] * 1857, m)
        c, s = cos_sin(Decimal(phi.numerator) / Decimal(phi.denominator))
        cc, _ = rnd("fp16", Fraction(c), m)
        ss, _ = rnd("fp16", Fraction(s), m)
        print(f"  {m}: theta_hat*1857 = {float(th[m] * 1857)!r} -> phi = {float(phi)!r}; "
              f"cos(phi) = {c:.12f} -> {float(cc)!r}; sin(phi) = {s:.12f} -> {float(ss)!r}")
        show(f"    cos({float(phi)}) fp16", "fp16", c, [m])
        show(f"    sin({float(phi)}) fp16", "fp16", s, [m])
    print("== r2: single:g=1/1024 at position 2049, fp16 (position rounding, ties) ==")
    for m in MODES:
        ih, _ = rnd("fp16", Fraction(2049), m)
        phi, _ = rnd("fp16", ih * Fraction(1, 1024), m)
        c, s = cos_sin(Decimal(phi.numerator) / Decimal(phi.denominator))
        cc, _ = rnd("fp16", Fraction(c), m)
        ss, _ = rnd("fp16", Fraction(s), m)
        print(f"  {m}: i_hat = {ih}, phi = {float(phi)!r}, cos = {c:.15f} -> {float(cc)!r}, "
              f"sin = {s:.15f} -> {float(ss)!r}")
        show(f"    cos({float(phi)}) fp16", "fp16", c, [m])
        show(f"    sin({float(phi)}) fp16", "fp16", s, [m])
    print("== hf / llamacpp: conventional:base=10000,dim=4, block 1 (theta = 1/100), "
          "position 3; activation bf16 ==")
    for m in MODES:
        inv, _ = rnd("fp32", Fraction(1, 100), m)
        ang, _ = rnd("fp32", inv * 3, m)
        c, s = cos_sin(Decimal(ang.numerator) / Decimal(ang.denominator))
        c32, _ = rnd("fp32", Fraction(c), m)
        s32, _ = rnd("fp32", Fraction(s), m)
        cb, _ = rnd("bf16", c32, m)
        sb, _ = rnd("bf16", s32, m)
        print(f"  {m}: inv_freq = fp32(1/100) = {float(inv)!r} (= {inv.numerator}/2^"
              f"{int(math.log2(inv.denominator))}); angle = fp32(3*inv) = {float(ang)!r}; "
              f"cos fp32 {float(c32)!r} -> bf16 {float(cb)!r}; sin fp32 {float(s32)!r} -> "
              f"bf16 {float(sb)!r}")
        show("    1/100", "fp32", Fraction(1, 100), [m])
        show("    3*inv", "fp32", inv * 3, [m])
        show("    cos(angle) fp32", "fp32", Fraction(c), [m])
        show("    sin(angle) fp32", "fp32", Fraction(s), [m])
        show("    cos fp32 -> bf16", "bf16", c32, [m])
        show("    sin fp32 -> bf16", "bf16", s32, [m])
    print("== fixed:1.2, single:g=1/64 under r1: first i where sin rounds away from 0 ==")
    for m in ("rne", "rz"):
        row = []
        for i in range(0, 26):
            c, s = cos_sin(Decimal(i) / 64)
            row.append((float(_fixed(Fraction(1, 4), Fraction(c), m)),
                        float(_fixed(Fraction(1, 4), Fraction(s), m))))
        print(f"  {m}: " + " ".join(f"{i}:{r}" for i, r in enumerate(row)))
    print("== query bias of the Y^3 head, C = 1000, g = 1, fp16 ==")
    c, s = cos_sin(3)
    show("1000 cos 3 fp16", "fp16", 1000 * c)
    show("-1000 sin 3 fp16", "fp16", -1000 * s)
    print("== f_large: smallest x in F with round(exp(-x)) = 0 ==")
    ln2 = Decimal(2).ln()
    for f, (p, emin, emax) in FORMATS.items():
        m_sub = -(emin - p + 1)  # min subnormal = 2^-m_sub
        for mode in ("rne", "rz"):
            # RNE: exp(-x) rounds to 0 iff exp(-x) <= 2^-(m_sub+1) (half the min subnormal;
            # exp(-x) is never exactly that for x in F \ {0}), i.e. x > (m_sub+1) ln2.
            # RZ/RD: iff exp(-x) < 2^-m_sub, i.e. x > m_sub ln2.
            bound = (m_sub + 1) * ln2 if mode == "rne" else m_sub * ln2
            b = Fraction(bound)
            q = quantum(f, b)
            k = math.floor(b / q) + 1
            v = k * q
            vd = Decimal(v.numerator) / Decimal(v.denominator)
            below = (k - 1) * q
            print(f"  {f} {mode}: bound {'%d' % ((m_sub + 1) if mode == 'rne' else m_sub)}*ln2 = "
                  f"{bound:.10f}; quantum 2^{int(math.log2(q))}; f_large = {k}*2^{int(math.log2(q))}"
                  f" = {vd} ; predecessor {float(below)!r}")


if __name__ == "__main__":
    main()
