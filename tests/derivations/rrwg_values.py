#!/usr/bin/env python3
"""Expected values of tests/proofs/test_rrwg.cpp ("Round and Round We Go", items (i) and (iii)),
computed independently of ropesim: exact rationals (fractions) and mpmath at 50 digits, with
round-to-nearest-even into a p-bit significand written out here (no ropesim code).

Run: python3 tests/derivations/rrwg_values.py
"""
from fractions import Fraction
import math

import mpmath

mpmath.mp.dps = 50


def round_nearest_even(x, p):
    """x (mpmath real, normal range) rounded to p significant bits, ties to even."""
    if x == 0:
        return Fraction(0)
    sign = -1 if x < 0 else 1
    x = abs(x)
    e = int(mpmath.floor(mpmath.log(x, 2)))
    scaled = x * mpmath.mpf(2) ** (p - 1 - e)  # in [2^(p-1), 2^p)
    lo = int(mpmath.floor(scaled))
    frac = scaled - lo
    if frac > 0.5 or (frac == 0.5 and lo % 2 == 1):
        lo += 1
    return sign * Fraction(lo) * Fraction(2) ** (e - (p - 1))


def gamma(m, u):
    return m * u / (1 - m * u)


def nope_bound(p, m):
    u = Fraction(1, 2 ** p)
    g = gamma(m, u)
    return (1 + u) * (1 + g) / (1 - g) - (1 - u) * (1 - g) / (1 + g)


print("# NoPE bound B = (1+u)(1+g)/(1-g) - (1-u)(1-g)/(1+g), n = 16 keys")
for name, p in (("bf16", 8), ("fp16", 11), ("fp32", 24)):
    for summation, m in (("sequential", 15), ("pairwise", 4), ("exact", 1)):
        b = nope_bound(p, m)
        print(f"{name} {summation}: B = {float(b):.6e} = {b.numerator}/{b.denominator}")

print("# no-decay: cos n at the record distances, and round_F(cos n) (r1, key at 0)")
for n in (44, 333, 710):
    c = mpmath.cos(n)
    print(f"cos({n}) = {mpmath.nstr(c, 20)}; 1 - cos = {mpmath.nstr(1 - c, 6)}")
    for name, p in (("bf16", 8), ("fp16", 11), ("fp32", 24)):
        r = round_nearest_even(c, p)
        print(f"  r1 {name}: {r} = {float(r)!r}")
# r2 in bf16 at n = 333: î = round_bf16(333) = 332 (tie between 332 and 334, even
# significand 166), θ̂ = 1, φ = 332; then round_bf16(cos 332).
i_hat = round_nearest_even(mpmath.mpf(333), 8)
print(f"r2 bf16: round(333) = {i_hat}; round(cos {i_hat}) = "
      f"{float(round_nearest_even(mpmath.cos(int(i_hat)), 8))!r}")
# The previous-token head: the first tie distance, round_F(cos n) = 1, at the record distances.
for name, p in (("bf16", 8), ("fp16", 11), ("fp32", 24)):
    for n in (1, 6, 19, 25, 44, 333, 710):
        if round_nearest_even(mpmath.cos(n), p) == 1:
            print(f"{name}: first record distance with round_F(cos n) = 1: {n}")
            break
