#!/usr/bin/env python3
"""Independent derivation of the expected values in tests/attention/test_hope_fope.cpp
(HoPE and FoPE schedules, docs/variants/HOPE_FOPE.md).

It shares nothing with ropesim: mpmath at 60 digits for the angles, wavelengths, logarithms
and cosines, Python integers for SplitMix64, and fractions.Fraction for rounding to binary64
(53 significant bits, nearest-even; the values are far from overflow and subnormals).
Prints:
  * for base 10000 and dim 8 and 128: theta_k = base^(-2k/dim), the wavelength 2*pi/theta_k,
    and which blocks a training length T drops (wavelength > T) for the T the tests use;
  * the FoPE coefficients a[k][m] = [k=m] + sigma*z[k][m] for seed 0 and 7, sigma = 3/10,
    dim 8, where z is SplitMix64 -> Box-Muller, each operation rounded to nearest binary64.

Run: python3 tests/derivations/hope_fope_values.py   (under a second)
"""
from fractions import Fraction

from mpmath import mp, mpf, pi, log, sqrt, cos, power

mp.dps = 60
MASK = (1 << 64) - 1


def rn53(x):
    """x (mpf or Fraction) rounded to nearest binary64 (ties to even), as a Fraction."""
    if isinstance(x, Fraction):
        q = x
    else:
        sign, man, exp, _ = mpf(x)._mpf_
        q = (-1) ** sign * Fraction(man) * Fraction(2) ** exp
    if q == 0:
        return q
    sign = -1 if q < 0 else 1
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    scale = Fraction(2) ** (e - 52)  # ulp
    n = q / scale
    f = n.numerator // n.denominator
    r = n - f
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and f % 2 == 1):
        f += 1
    return sign * f * scale


def splitmix64(seed, n):
    z = (seed + (n + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def to_mpf(q):
    return mpf(q.numerator) / q.denominator


def box_muller(x1, x2):
    u1 = Fraction((x1 >> 11) + 1, 1 << 53)
    u2 = Fraction(x2 >> 11, 1 << 53)
    a = rn53(log(to_mpf(u1)))
    a = rn53(-2 * a)
    a = rn53(sqrt(to_mpf(a)))
    b = rn53(2 * pi)
    b = rn53(b * u2)
    b = rn53(cos(to_mpf(b)))
    return rn53(a * b)


def coefficient(seed, sigma, n, k, m):
    j = k * n + m
    z = box_muller(splitmix64(seed, 2 * j), splitmix64(seed, 2 * j + 1))
    return (1 if k == m else 0) + sigma * z


def dropped(base, dim, T):
    out = []
    for k in range(dim // 2):
        theta = power(mpf(base), mpf(-2 * k) / dim)
        if 2 * pi / theta > T:
            out.append(k)
    return out


print("SplitMix64(seed 0): first outputs", [hex(splitmix64(0, n)) for n in range(2)])
for dim in (8,):
    for k in range(dim // 2):
        theta = power(mpf(10000), mpf(-2 * k) / dim)
        print(f"dim {dim} k {k}: theta {mp.nstr(theta, 20)} wavelength {mp.nstr(2 * pi / theta, 20)}")
for T in (6, 7, 62, 63, 100, 628, 629, 6283, 6284):
    print(f"base 10000 dim 8 T {T}: dropped {dropped(10000, 8, T)}")
for T in (512, 1024, 4096, 8192):
    d = dropped(10000, 128, T)
    print(f"base 10000 dim 128 T {T}: {len(d)} dropped, first dropped {d[0] if d else None}")
d = dropped(500000, 128, 8192)
print(f"base 500000 dim 128 T 8192: {len(d)} dropped, first dropped {d[0]}")
sigma = Fraction(3, 10)
for seed in (0, 7):
    for (k, m) in ((0, 0), (0, 1), (1, 0), (3, 2)):
        z = box_muller(splitmix64(seed, 2 * (k * 4 + m)), splitmix64(seed, 2 * (k * 4 + m) + 1))
        a = coefficient(seed, sigma, 4, k, m)
        print(f"seed {seed} k {k} m {m}: z = {float(z)!r} = {z.numerator}/{z.denominator}; "
              f"a = {float(a)!r}")
