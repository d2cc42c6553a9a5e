#!/usr/bin/env python3
"""Second implementation of numeric/accumulator.hpp (accumulator models of a dot product) and of
the mixed-format attention case of tests/attention/test_mixed_attention.cpp, for the expected
values in tests/numeric/test_accumulator.cpp and tests/attention/test_mixed_attention.cpp.

It shares nothing with ropesim: every value is an exact fractions.Fraction, rounded into a
binary format (p bits incl. the hidden bit, normal exponents [emin, emax], subnormals, overflow
to inf) by round_to() below; exp is evaluated by mpmath at 200 bits and the 200-bit binary value
is rounded (the exponentials used here are nowhere near a rounding boundary of fp32: the script
checks a 2^-150 relative margin).

The input vectors come from a 64-bit LCG that the C++ test reproduces: every input is built
exactly as a bf16 value (sign, 8-bit significand, small exponent), so no rounding is involved in
making them.

Run: python3 tests/derivations/accumulator_values.py
"""
from fractions import Fraction
import math

FORMATS = {  # p incl. hidden bit, emin, emax
    "fp16": (11, -14, 15), "bf16": (8, -126, 127), "fp32": (24, -126, 127),
    "tf32": (11, -126, 127), "p=11,e=8": (11, -126, 127),
}
INF = float("inf")


def round_to(q, fmt, mode):
    """The element of fmt that the rational q rounds to (mode 'rne' or 'rz'); inf on overflow."""
    if isinstance(q, float):  # inf / nan pass through
        return q
    p, emin, emax = FORMATS[fmt]
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = math.floor(math.log2(a))  # close; fix exactly below
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)  # subnormals share the quantum of the lowest binade
    quantum = Fraction(2) ** (e - p + 1)
    x = a / quantum
    n = math.floor(x)
    rest = x - n
    if mode == "rz":
        pass
    elif mode == "rne":
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
            n += 1
    else:
        raise ValueError(mode)
    r = n * quantum
    max_finite = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if r > max_finite:
        if mode == "rz":
            return sign * max_finite
        return sign * INF
    return sign * r


def add(x, y, fmt, mode):
    if isinstance(x, float) or isinstance(y, float):
        return x + y  # IEEE special values (inf + inf = inf, inf - inf = nan)
    return round_to(x + y, fmt, mode)


def mul(x, y, fmt, mode):
    if isinstance(x, float) or isinstance(y, float):
        return float(x) * float(y)
    return round_to(x * y, fmt, mode)


def dot_narrow(a, b, fmt, mode):
    s = mul(a[0], b[0], fmt, mode)
    for x, y in zip(a[1:], b[1:]):
        s = add(s, mul(x, y, fmt, mode), fmt, mode)
    return s


def dot_promoted(a, b, fmt, mode, k, wide, wmode):
    total = None
    for start in range(0, len(a), k):
        t = dot_narrow(a[start:start + k], b[start:start + k], fmt, mode)
        t = round_to(t, wide, wmode)
        total = t if total is None else add(total, t, wide, wmode)
    return total


class Lcg:
    """x <- 6364136223846793005 x + 1442695040888963407 (mod 2^64), seeded with `seed`."""

    def __init__(self, seed):
        self.x = seed

    def next(self):
        self.x = (6364136223846793005 * self.x + 1442695040888963407) % 2 ** 64
        return self.x

    def bf16(self, exponent_spread):
        """A bf16 value ±m·2^(e-7), m in [128, 256), e in [-spread/2, spread/2)."""
        x = self.next()
        m = 128 + (x >> 57)
        e = ((x >> 40) % exponent_spread) - exponent_spread // 2
        s = -1 if (x >> 39) & 1 else 1
        return s * Fraction(m) * Fraction(2) ** (e - 7)


def hexf(v):
    return v.hex() if isinstance(v, float) else float(v).hex()


def accumulator_cases():
    print("== tests/numeric/test_accumulator.cpp")
    ones = [Fraction(1)] * 4096
    print("sum of 4096 ones, fp16 rne:", hexf(dot_narrow(ones, ones, "fp16", "rne")))
    print("  promoted /128>fp32:", hexf(dot_promoted(ones, ones, "fp16", "rne", 128, "fp32", "rne")))
    g = Lcg(20261201)
    a = [g.bf16(8) for _ in range(300)]
    b = [g.bf16(8) for _ in range(300)]
    for fmt, mode in [("p=11,e=8", "rne"), ("p=11,e=8", "rz"), ("fp16", "rz"), ("bf16", "rne")]:
        print(f"lcg 300 {fmt} {mode}: narrow {hexf(dot_narrow(a, b, fmt, mode))}")
        for k in (1, 7, 128):
            print(f"    /{k}>fp32: {hexf(dot_promoted(a, b, fmt, mode, k, 'fp32', 'rne'))}")
    print("exact:", hexf(sum(x * y for x, y in zip(a, b))))
    big = [Fraction(200)] * 3
    print("fp16 overflow 200*200*3:", hexf(dot_narrow(big, big, "fp16", "rne")),
          "rz:", hexf(dot_narrow(big, big, "fp16", "rz")))


def exp_fp32(x):
    """exp(x) rounded to fp32 (rne) with mpmath at 200 bits; checks the rounding margin."""
    import mpmath
    mpmath.mp.prec = 200
    y = mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
    man, exp = y.man_exp
    q = Fraction(int(man)) * Fraction(2) ** int(exp) if exp >= 0 else Fraction(int(man), 2 ** -int(exp))
    r = round_to(q, "fp32", "rne")
    # margin: q must be farther than 2^-150 relative from the rounding boundary
    p, emin, emax = FORMATS["fp32"]
    e = math.floor(math.log2(q))
    quantum = Fraction(2) ** (e - p + 1)
    frac = (q / quantum) - math.floor(q / quantum)
    assert abs(frac - Fraction(1, 2)) > Fraction(1, 2 ** 120), "too close to a tie"
    return r


def softmax_fp32(scores):
    m = max(scores)
    e = [exp_fp32(round_to(s - m, "fp32", "rne")) for s in scores]
    z = e[0]
    for t in e[1:]:
        z = add(z, t, "fp32", "rne")
    return [round_to(t / z, "fp32", "rne") for t in e]


def accumulation_case(terms=4096, keys=8, seed=20261201):
    """attention::run_accumulation_case: needle k_0 = q, bf16 coordinates |x| in [2^-5, 2^-1)."""
    print(f"== accumulation case: {terms} terms, {keys} keys, seed {seed}")
    g = Lcg(seed)

    def draw():
        x = g.next()
        m = 128 + (x >> 57)
        e = ((x >> 40) % 4) - 5
        s = -1 if (x >> 39) & 1 else 1
        return s * Fraction(m) * Fraction(2) ** (e - 7)

    q = [draw() for _ in range(terms)]
    ks = [q] + [[draw() for _ in range(terms)] for _ in range(keys - 1)]
    c = round_to(1 / round_to(Fraction(math.isqrt(terms)), "fp32", "rne"), "fp32", "rne")
    assert math.isqrt(terms) ** 2 == terms, "the script handles square term counts only"
    print("exact dots:", [float(sum(x * y for x, y in zip(q, k))) for k in ks])
    rows = {}
    for name, acc in [("p=11,e=8", lambda k: dot_narrow(q, k, "p=11,e=8", "rne")),
                      ("p=11,e=8/128>fp32", lambda k: dot_promoted(q, k, "p=11,e=8", "rne", 128, "fp32", "rne")),
                      ("fp32", lambda k: dot_narrow(q, k, "fp32", "rne"))]:
        scores = [round_to(round_to(acc(k), "fp32", "rne") * c, "fp32", "rne") for k in ks]
        weights = softmax_fp32(scores)
        rows[name] = weights
        print(name, "scores", [hexf(x) for x in scores])
        print(name, "weights", [hexf(x) for x in weights])
    first = rows["p=11,e=8"]
    for name, w in rows.items():
        print(f"max |dw| {name} vs p=11,e=8: {max(abs(float(a - b)) for a, b in zip(w, first)):.6g}",
              f"needle weight {float(w[0]):.9g}")


if __name__ == "__main__":
    accumulator_cases()
    accumulation_case()
