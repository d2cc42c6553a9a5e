#!/usr/bin/env python3
"""Hand-derivation helper for the Resonance RoPE values in tests/attention/test_resonance.cpp and
docs/variants/RESONANCE.md.

It shares nothing with ropesim. For each (base, dim) it prints
  * the exact wavelengths lambda_d = round(2*pi*base^(2(d-1)/dim)), d = 1..dim/2, from mpmath at
    400 bits (a value within 2^-100 of a half-integer is refused: then 400 bits would not decide);
  * the fp32 wavelengths of the reference code (sheryc/resonance_rope `resonance_register`):
    inv_freq = 1/fp32(base^fp32(fp32(2k)/fp32(dim))) and lambda = round(fp32(fp32(1/inv_freq) *
    fp32(2*pi))), every operation correctly rounded to fp32 (torch's powf is not guaranteed to be
    correctly rounded: this checks that the rounding to an integer is far from fp32 error);
  * the lcm of the wavelengths (the period of the rotation when every block is tabulated).
Also the Resonance-YaRN wavelengths for one (factor, original) with transformers' YaRN ramp.

Run: python3 tests/derivations/resonance_wavelengths.py
"""
from fractions import Fraction
import math
import struct

import mpmath

mpmath.mp.prec = 400


def fp32(x):
    """Nearest-even fp32 of a Python float or an mpmath number (via an exact double when needed)."""
    if isinstance(x, mpmath.mpf):
        # round to 24 bits directly from the 400-bit value
        m, e = mpmath.frexp(x)
        scaled = m * 2 ** 24
        r = int(mpmath.nint(scaled))  # mpmath.nint rounds half to even
        return float(mpmath.ldexp(r, e - 24))
    return struct.unpack("f", struct.pack("f", x))[0]


def exact_wavelength(theta):
    x = 2 * mpmath.pi / theta
    frac = x - mpmath.floor(x)
    if abs(frac - mpmath.mpf(0.5)) < mpmath.mpf(2) ** -100:
        raise SystemExit("too close to a tie: %s" % x)
    return int(mpmath.floor(x + mpmath.mpf(0.5)))


def reference_fp32_wavelength(base, dim, k):
    e = fp32(fp32(float(2 * k)) / fp32(float(dim)))
    p = fp32(mpmath.power(base, mpmath.mpf(e)))
    inv = fp32(1.0 / p)
    recip = fp32(1.0 / inv)
    x = fp32(recip * fp32(mpmath.mpf(2) * mpmath.pi))
    return int(round(x))  # Python round: ties to even, as torch.round


def lcm(values):
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


def resonance(base, dim):
    exact = [exact_wavelength(mpmath.power(base, -mpmath.mpf(2 * k) / dim)) for k in range(dim // 2)]
    ref = [reference_fp32_wavelength(base, dim, k) for k in range(dim // 2)]
    print("resonance:base=%s,dim=%d" % (base, dim))
    print("  exact lambda_d       ", exact)
    print("  reference fp32 lambda", ref, "(same)" if ref == exact else "(DIFFERENT)")
    print("  lcm                  ", lcm(exact))
    return exact


def yarn_resonance(base, dim, factor, original, beta_fast=32, beta_slow=1):
    """transformers _compute_yarn_parameters with truncate, exact ramp, then the rounding."""
    def correction_dim(n):
        return dim * mpmath.log(original / (n * 2 * mpmath.pi)) / (2 * mpmath.log(base))
    low = max(int(mpmath.floor(correction_dim(beta_fast))), 0)
    high = min(int(mpmath.ceil(correction_dim(beta_slow))), dim - 1)
    span = Fraction(1, 1000) if low == high else Fraction(high - low)
    out = []
    for k in range(dim // 2):
        ramp = min(max((Fraction(k) - low) / span, Fraction(0)), Fraction(1))
        blend = ramp / Fraction(factor) + (1 - ramp)  # inv_freq factor: extrapolation weight 1 - ramp
        theta = mpmath.power(base, -mpmath.mpf(2 * k) / dim) * mpmath.mpf(blend.numerator) / blend.denominator
        out.append(exact_wavelength(theta))
    print("resonance-yarn:base=%s,dim=%d,factor=%s,original=%s  (low, high) = (%d, %d)"
          % (base, dim, factor, original, low, high))
    print("  exact lambda_d       ", out)
    return out


def fp32_hex(x):
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def table_entry(wavelength, t):
    """resonance-table at fp32 (activation fp32): r_inv_freq = fp32(fp32(1/lambda)*fp32(2pi)),
    angle = fp32(fp32(t)*r_inv_freq), cos/sin correctly rounded to fp32 (400-bit mpmath)."""
    two_pi = fp32(mpmath.mpf(2) * mpmath.pi)
    r_inv = fp32(fp32(1.0 / wavelength) * two_pi)  # products of two fp32 are exact in binary64
    angle = fp32(float(t) * r_inv)
    c, s = fp32(mpmath.cos(mpmath.mpf(angle))), fp32(mpmath.sin(mpmath.mpf(angle)))
    print("  lambda=%d t=%d: r_inv_freq=%s angle=%s (%r) cos=%s (%r) sin=%s (%r)"
          % (wavelength, t, fp32_hex(r_inv), fp32_hex(angle), angle, fp32_hex(c), c, fp32_hex(s), s))


if __name__ == "__main__":
    print("resonance-table entries at fp32")
    table_entry(6, 1)      # position 7 of block 0 (7 mod 6 = 1)
    table_entry(1987, 1000)  # block 5 of dim=16, position 1000
    table_entry(1987, 2987)  # position 2987 untabulated (seq_len=1000 < 1987): t = 2987
    table_entry(1987, 1000 + 0)  # tabulated (seq_len >= 1987): position 2987 reads t = 1000
    resonance(10000, 8)
    resonance(10000, 4)
    resonance(10000, 16)
    resonance(10000, 32)
    resonance(10000, 128)
    yarn_resonance(10000, 16, 4, 64)
