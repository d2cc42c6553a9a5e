#!/usr/bin/env python3
"""Independent derivation of the expected values in tests/proofs/test_bounds.cpp and
tests/cli/test_table_bounds.cpp (ropesim table bounds, docs/BOUNDS.md).

It shares nothing with ropesim: mpmath at 50 digits for the cosines and logarithms, and
fractions.Fraction for rounding into a format (p significant bits, round-to-nearest-even; the
values here are far from overflow and subnormals). Prints:
  * B_m(b) = sum_{i<D/2} cos(m b^(-2i/D)) for D = 4, b = 100;
  * the smallest base of the two-significant-digit grid (10, 11, ..., 99, 100, 110, ...) with
    B_m >= 0 for all m <= L, for D = 8 and L = 20, 21, 50, 100, and the first m rejecting the
    grid base below it; the same with r1 in bf16 / fp16 (each cosine rounded into F, summed in F
    in block order);
  * B_m summed in bf16 and fp32 (r1) for D = 4, b = 300, m = 3 and 10;
  * d_extra = 2 ceil((d/2) log_b(T/2pi)) and T_extra = 2 pi b^(d_extra/d) (Liu et al. 2023);
  * the semantic-drift lengths for conventional:base=100,dim=8 (tolerance 0.012) and llama2-7b
    (blocks 48..63, tolerance 0.01), exact and with r1 in bf16.

Run: python3 tests/derivations/bounds_values.py   (about 5 seconds)
"""
from fractions import Fraction
import math

from mpmath import mp, mpf, cos, power, log, ceil, pi

mp.dps = 50


def rn(x, p):
    """x (mpf or Fraction) rounded to p significant bits, nearest-even."""
    if not isinstance(x, Fraction):
        x = Fraction(mp.nstr(x, 45, min_fixed=-100, max_fixed=100))
    if x == 0:
        return Fraction(0)
    s, a = (-1 if x < 0 else 1), abs(x)
    e = math.floor(math.log2(a))
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (e - p + 1)
    q = a / ulp
    f = math.floor(q)
    r = q - f
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and f % 2 == 1):
        f += 1
    return s * f * ulp


def thetas(b, D):
    return [power(mpf(b), mpf(-2 * i) / D) for i in range(D // 2)]


def B_exact(b, D, m):
    return sum(cos(m * t) for t in thetas(b, D))


def B_format(b, D, m, p):
    c = [rn(cos(m * t), p) for t in thetas(b, D)]
    s = c[0]
    for x in c[1:]:
        s = rn(s + x, p)
    return s


def grid(i):
    return (10 + i % 90) * 10 ** (i // 90)


def search(D, lengths, negative):
    i, out = 0, []
    for L in lengths:
        while True:
            w = next((m for m in range(L + 1) if negative(grid(i), D, m)), None)
            if w is None:
                break
            i += 1
        below = grid(i - 1) if i > 0 else None
        first = next(m for m in range(L + 1) if negative(below, D, m)) if below else None
        out.append((L, grid(i), below, first))
    return out


print("D=4 b=100 B_0..B_4:", [mp.nstr(B_exact(100, 4, m), 20) for m in range(5)])
print("exact D=8:", search(8, [20, 21, 50, 100], lambda b, D, m: B_exact(b, D, m) < 0))
print("r1 bf16 D=8:", search(8, [10, 20, 50], lambda b, D, m: B_format(b, D, m, 8) < 0))
print("r1 fp16 D=8:", search(8, [10, 20, 50], lambda b, D, m: B_format(b, D, m, 11) < 0))
for m in (3, 10):
    print(f"D=4 b=300 m={m}: exact {mp.nstr(B_exact(300, 4, m), 12)}, bf16 {float(B_format(300, 4, m, 8))},"
          f" fp32 {float(B_format(300, 4, m, 24))}")
for b, d, T in [(10000, 128, 4096), (10000, 128, 32768), (500000, 128, 8192), (10000, 24, 2048), (2, 4, 4096)]:
    x = mpf(d) / 2 * log(mpf(T) / (2 * pi)) / log(b)
    de = 2 * int(ceil(x))
    print(f"b={b} d={d} T={T}: x={mp.nstr(x, 12)} d_extra={de} T_extra={mp.nstr(2 * pi * power(b, mpf(de) / d), 12)}")


def drift(ths, tol, p=None):
    n = len(ths)
    for m in range(1, 100000):
        if p is None:
            if sum(cos(m * t) for t in ths) < (1 - mpf(tol)) * n:
                return m
        else:
            c = [rn(cos(m * t), p) for t in ths]
            s = c[0]
            for x in c[1:]:
                s = rn(s + x, p)
            if s < (1 - Fraction(tol)) * n:
                return m


small = [power(mpf(100), mpf(-3) / 4)]
print("drift base=100 dim=8 tol=0.012: exact", drift(small, "0.012"), "r1 bf16", drift(small, "0.012", 8))
llama = [power(mpf(10000), mpf(-2 * i) / 128) for i in range(48, 64)]
print("drift llama2 tol=0.01: exact", drift(llama, "0.01"), "r1 bf16", drift(llama, "0.01", 8))
