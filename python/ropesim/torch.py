"""ropesim.torch: a PyTorch twin of ropesim's F-transformer (docs/TRAINED.md).

``RopeTransformer`` is an ``nn.Module`` whose forward pass is the model-spec semantics of
docs/MODEL_SPEC.md (THEORY §2): ``BOS w_1 … w_N EOS`` (BOS at position 0, EOS at N+1; or
``w EOS`` without BOS), strict (keys q < p) or non-strict (q ≤ p) causal masking, a query that
sees no key gets the zero vector, per head ``q_p = R̂_p(Q x_p + b_q)``, ``k_p = R̂_p(K x_p +
b_k)``, ``v_p = V x_p + b_v``, scores ``q_p · k_q`` (times ``scale`` if given), softmax, ``a_p =
Σ_h O_h o_{h,p} + attention_bias``, post-LN (``LN1(x + a)``, ``LN2(h + FFN(h))``) or pre-LN
(``x + A(LN1(x))``, ``h + FFN(LN2(h))``) where a layer has the LayerNorm, ``FFN(h) = W2
ReLU(W1 h + b1) + b2``, ``final_norm`` and the classifier ``y = w · x_EOS + b`` on the EOS
representation; accept iff y > 0 (NaN rejects).

What the twin computes is that function in the module's dtype (float32 for training, float64
after ``model.double()``), with PyTorch's kernels: each operation is rounded once into the dtype
but sums run in PyTorch's order (blocked, vectorised), not ropesim's left-to-right order, so the
twin equals ``ropesim run --format fp64`` only up to rounding. ``logits_with_bound`` returns, with
each logit y, a radius r such that y and the output of *any* evaluation of the same spec in that
format that rounds every operation once to nearest (ropesim's included, whatever its summation
order) lie within r of the exact real value; so the twin and ``ropesim run`` differ by at most
2r, and a decision with |y| > 2r is the same in both (the argument is in ``_Bound``).

Rotations: R̂_p uses ropesim's own realised table, ``ropesim.rotation_table(schedule,
realisation, F, positions)`` with F = fp64 for float64 and fp32 for float32 (for r1 these are
cos and sin of the exact angle θ_d·p, each correctly rounded once into the dtype; THEORY §3), and
the rotation arithmetic of THEORY §2.1, ``(rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) +
rnd(c·x1)))``. So the twin in float64 uses the very table ``ropesim run --format fp64`` uses.
Realisations: r1, r2, r3 and none (pipeline realisations such as hf or llamacpp-cpu, which
rotate in formats of their own, are refused).

Softmax: ``stable`` (``e_j = exp(S_j - M)``, ``α_j = e_j / Σ e``) and ``no-max-subtraction``
(``e_j = exp(S_j)``) as written; ``online`` is computed as ``stable`` (the same real function;
only ropesim's rounding order differs).

Export: ``model.to_model_spec(path, format="bf16")`` writes every parameter as the exact decimal
of its value (``"0.100000001490116119384765625"``), so ``ropesim run PATH`` reads the module's
weights exactly and rounds each once into F; ``from_model_spec(path)`` reads a spec back (every
number read exactly and rounded once, to nearest-even, into the dtype).
"""
from __future__ import annotations

import json as _json
import math as _math
import os as _os
import re as _re
from fractions import Fraction as _Fraction
from typing import Callable, Iterable, Sequence

import numpy as _np
import torch
import torch.nn.functional as _F
from torch import nn

from . import _ropesim
from . import rotation_table as _rotation_table

__all__ = ["RopeTransformer", "from_model_spec", "RopeSegment", "train", "exact_decimal"]

_TWIN_REALISATIONS = ("r1", "r2", "r3", "none")
_MASKINGS = ("strict", "non-strict")
_SOFTMAXES = ("stable", "no-max-subtraction", "online")
_NORMS = (None, "post", "pre")
_DTYPE_FORMAT = {torch.float64: "fp64", torch.float32: "fp32"}


def _format_of(dtype: torch.dtype) -> str:
    """The ropesim format of a twin dtype: fp64 for float64, fp32 for float32."""
    if dtype not in _DTYPE_FORMAT:
        raise TypeError(f"dtype: the twin computes in torch.float32 or torch.float64, got {dtype}")
    return _DTYPE_FORMAT[dtype]


# ---------------------------------------------------------------------------------------------
# Exact numbers: the spec's decimals (docs/MODEL_SPEC.md "Numbers")
# ---------------------------------------------------------------------------------------------

def exact_decimal(x: float) -> str:
    """The exact decimal of the binary64 `x`, spelled as ropesim writes spec numbers.

    Positional (``"0.100000001490116119384765625"``), or scientific past five zeros after the
    point (``"5.9604644775390625e-8"``); ``"-0"`` for negative zero, ``"inf"``/``"-inf"``.
    Every binary value is a dyadic rational, so its decimal is finite and exact. Raises
    ValueError for NaN (not an element of any F; a spec refuses it).
    """
    x = float(x)
    if x != x:
        raise ValueError("NaN is not an element of F; a model spec cannot hold it")
    if _math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if _math.copysign(1.0, x) < 0 else "0"
    q = _Fraction(x)
    sign = "-" if q < 0 else ""
    num, den = abs(q.numerator), q.denominator
    k = den.bit_length() - 1  # den = 2^k
    digits = str(num * 5 ** k)  # the value is digits · 10^-k
    if k == 0:
        return sign + digits
    if len(digits) > k:
        return sign + digits[:-k] + "." + digits[-k:]
    zeros = k - len(digits)  # zeros after the point before the first digit
    if zeros <= 5:
        return sign + "0." + "0" * zeros + digits
    exponent = len(digits) - k - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{exponent}"


_SPEC_DECIMAL = _re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SPEC_FRACTION = _re.compile(r"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)/"
                             r"((0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)")


class _SpecNumber(str):
    """The source text of a JSON number (json.load's parse_float/parse_int hook), kept so that
    it is read exactly, never through a double (docs/MODEL_SPEC.md "Numbers")."""


def _spec_value(value, path: str):
    """A spec number (a JSON number's text, or a string: decimal, fraction, inf, -inf, -0) as
    an exact Fraction, or +-inf as a float; -0 as the float -0.0. Raises ValueError naming
    `path` for anything else (NaN included)."""
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError(f"{path}: expected a number, got {type(value).__name__} {value!r}")
    text = str(value)
    if text in ("inf", "-inf"):
        return float(text)
    if _SPEC_DECIMAL.fullmatch(text):
        q = _Fraction(text)
        return -0.0 if q == 0 and text.startswith("-") else q
    m = _SPEC_FRACTION.fullmatch(text)
    if m:
        den = _Fraction(m.group(5))
        if den == 0:
            raise ValueError(f"{path}: division by zero in {text!r}")
        return _Fraction(m.group(1)) / den
    raise ValueError(f"{path}: expected a number (a JSON number, or a string holding a decimal "
                     f"\"0.1\", a fraction \"1/3\", \"inf\", \"-inf\" or \"-0\"), got {text!r}")


def _round_to(q, dtype: torch.dtype) -> float:
    """The exact value `q` (Fraction, or a float ±inf/-0.0) rounded once, to nearest with ties
    to even, into float64 or float32 (returned as the Python float holding that value)."""
    if isinstance(q, float):
        return q
    if q == 0:
        return 0.0
    try:
        d = float(q)  # CPython's int/int true division: correctly rounded into binary64
    except OverflowError:
        d = _math.inf if q > 0 else -_math.inf
    if dtype == torch.float64:
        return d
    f = _np.float32(d) if abs(d) < 3.5e38 else _np.float32(_math.copysign(_np.inf, d))
    # float32(d) may be a double rounding: choose among f and its neighbours the nearest to q.
    best = None
    for c in (_np.nextafter(f, _np.float32(-_np.inf)), f, _np.nextafter(f, _np.float32(_np.inf))):
        c = float(c)
        if _math.isinf(c):
            # the rounding boundary to ±inf: max + half an ulp = (2 - 2^-24)·2^127
            limit = _Fraction(2 ** 128 - 2 ** 103)
            if abs(q) >= limit:
                return c if (c > 0) == (q > 0) else best
            continue
        err = abs(_Fraction(c) - q)
        if best is None or err < best[0] or (
                err == best[0] and (_np.float32(c).view(_np.uint32) & 1) == 0):
            best = (err, c)
    return best[1]


# ---------------------------------------------------------------------------------------------
# RoPE segments (docs/MODEL_SPEC.md "A head": rope)
# ---------------------------------------------------------------------------------------------

_SCHEDULE_SHAPES: dict = {}


def _schedule_shape(schedule: str) -> tuple[int, int]:
    """(rotary blocks, unrotated pairs) of a ropesim schedule spec, as ropesim's own model-spec
    reader sees it: the blocks are the columns of its realised table, and the dimension is what
    the reader reports for a probe head of head_dim 1 whose one segment is the schedule. Raises
    ValueError with ropesim's message for a schedule it does not read."""
    if schedule not in _SCHEDULE_SHAPES:
        probe = {"ropesim_model": 1, "policy": {"format": "fp64"}, "d_model": 1,
                 "alphabet": ["a"], "embedding": {"bos": [0], "eos": [0], "symbols": {"a": [0]}},
                 "layers": [{"heads": [{"head_dim": 1, "value_dim": 1, "output": [[0]],
                                        "rope": [{"schedule": schedule, "realisation": "none"}]}]}],
                 "classifier": {"weights": [0]}}
        try:  # the library reads the spec as `ropesim run` does
            _ropesim.run_model(_ropesim.parse_model(_json.dumps(probe)), "", False)
            dimension = 1
        except ValueError as e:
            m = _re.search(r"segments cover (\d+) coordinates, head_dim is 1", str(e))
            if not m:
                text = str(e)
                raise ValueError(text[text.find("bad schedule"):] if "bad schedule" in text
                                 else text) from None
            dimension = int(m.group(1))
        blocks = _rotation_table(schedule, "r1", "fp64", 1)[0].shape[1]
        _SCHEDULE_SHAPES[schedule] = (blocks, (dimension - 2 * blocks) // 2)
    return _SCHEDULE_SHAPES[schedule]


class RopeSegment:
    """One segment of a head's rope: a ropesim schedule with one realisation per rotary block,
    or ``unrotated_pairs`` pairs left alone (docs/MODEL_SPEC.md).

    Coordinates: the schedule's 2·blocks rotary ones (paired ``adjacent`` (2d, 2d+1) or
    ``rotate_half`` (d, d + blocks)), then 2·(its own unrotated pairs). `realisation`: one of
    r1, r2, r3, none for every block, or a list with one per block. Raises ValueError for an
    unknown schedule, a realisation the twin does not compute, or a wrong count.
    """

    def __init__(self, schedule: str | None = None, realisation="r1", layout: str | None = None,
                 unrotated_pairs: int | None = None):
        if (schedule is None) == (unrotated_pairs is None):
            raise ValueError("rope segment: give a schedule or unrotated_pairs, not both")
        self.schedule = schedule
        if schedule is None:
            if isinstance(unrotated_pairs, bool) or not isinstance(unrotated_pairs, int) \
                    or unrotated_pairs < 1:
                raise ValueError(f"rope segment: unrotated_pairs must be an int >= 1, got "
                                 f"{unrotated_pairs!r}")
            self.blocks, self.unrotated, self.realisations = 0, unrotated_pairs, []
            self.layout = "adjacent"
            return
        if not isinstance(schedule, str):
            raise TypeError(f"rope segment: schedule must be a str, got {type(schedule).__name__}")
        try:
            self.blocks, self.unrotated = _schedule_shape(schedule)
        except ValueError as e:
            raise ValueError(f"rope segment: schedule {schedule!r}: {e}") from None
        names = [realisation] * self.blocks if isinstance(realisation, str) else list(realisation)
        if len(names) != self.blocks:
            raise ValueError(f"rope segment {schedule!r}: expected one realisation per rotary "
                             f"block: {self.blocks}, got {len(names)}")
        for r in names:
            if r not in _TWIN_REALISATIONS:
                raise ValueError(f"rope segment {schedule!r}: realisation {r!r}: the twin "
                                 f"computes {', '.join(_TWIN_REALISATIONS)}")
        self.realisations = names
        self.realisation_text = realisation if isinstance(realisation, str) else list(names)
        if layout not in (None, "adjacent", "rotate_half"):
            raise ValueError(f"rope segment {schedule!r}: layout {layout!r}; accepted: adjacent, "
                             f"rotate_half")
        self.layout = layout or "adjacent"
        self._explicit_layout = layout is not None
        self._tables: dict = {}

    @property
    def dimension(self) -> int:
        """2·(rotary blocks + unrotated pairs): the head coordinates the segment covers."""
        return 2 * (self.blocks + self.unrotated)

    def pairs(self) -> list[tuple[int, int, int]]:
        """(block, i0, i1) of every rotated block (realisation not none), i0/i1 within the
        segment."""
        out = []
        for d, r in enumerate(self.realisations):
            if r == "none":
                continue
            if self.layout == "adjacent":
                out.append((d, 2 * d, 2 * d + 1))
            else:
                out.append((d, d, d + self.blocks))
        return out

    def table(self, dtype: torch.dtype, positions: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin) of shape (≥ positions, blocks) in `dtype`: ropesim's realised table at
        F = fp64 / fp32 (ropesim.rotation_table, bit for bit; THEORY §3). Blocks whose
        realisation is none hold cos 1, sin 0 (never used)."""
        fmt = _format_of(dtype)
        cached = self._tables.get(fmt)
        if cached is not None and cached[0].shape[0] >= positions:
            return cached
        n = max(positions, 64, 2 * (cached[0].shape[0] if cached is not None else 0))
        cos = _np.ones((n, self.blocks))
        sin = _np.zeros((n, self.blocks))
        for r in sorted(set(self.realisations) - {"none"}):
            c, s = _rotation_table(self.schedule, r, fmt, n)
            cols = [d for d, name in enumerate(self.realisations) if name == r]
            cos[:, cols], sin[:, cols] = c[:, cols], s[:, cols]
        table = (torch.tensor(cos, dtype=dtype), torch.tensor(sin, dtype=dtype))
        self._tables[fmt] = table
        return table

    def to_spec(self) -> dict:
        """The segment as a model-spec object."""
        if self.schedule is None:
            return {"unrotated_pairs": self.unrotated}
        out = {"schedule": self.schedule, "realisation": self.realisation_text}
        if self._explicit_layout:
            out["layout"] = self.layout
        return out

    def __repr__(self):
        return f"RopeSegment({self.to_spec()!r})"


def _segments(rope) -> list[RopeSegment]:
    """A head's rope as segments: None (NoPE), a schedule string (realisation r1), a
    (schedule, realisation) tuple, a spec segment dict, a RopeSegment, or a list of those."""
    if rope is None:
        return []
    if isinstance(rope, (str, tuple, dict, RopeSegment)):
        rope = [rope]
    if not isinstance(rope, list) or not rope:
        raise ValueError(f"rope: expected None, a schedule, (schedule, realisation), a segment "
                         f"dict or a non-empty list of them, got {rope!r}")
    out = []
    for item in rope:
        if isinstance(item, RopeSegment):
            out.append(item)
        elif isinstance(item, str):
            out.append(RopeSegment(item))
        elif isinstance(item, tuple) and len(item) == 2:
            out.append(RopeSegment(item[0], item[1]))
        elif isinstance(item, dict):
            item = {k: v for k, v in item.items() if k != "comment" and not k.startswith("_")}
            unknown = set(item) - {"schedule", "realisation", "realization", "layout", "format",
                                   "unrotated_pairs"}
            if unknown:
                raise ValueError(f"rope segment: unknown field {sorted(unknown)[0]!r}")
            if "format" in item:
                raise ValueError("rope segment: a segment 'format' is not supported by the twin "
                                 "(it rotates in its own dtype)")
            if "unrotated_pairs" in item:
                pairs = item["unrotated_pairs"]
                if isinstance(pairs, _SpecNumber):  # read by from_model_spec
                    pairs = _int(pairs, "unrotated_pairs")
                out.append(RopeSegment(unrotated_pairs=pairs))
            else:
                if "schedule" not in item:
                    raise ValueError("rope segment: missing 'schedule'")
                r = item.get("realisation", item.get("realization"))
                if r is None:
                    raise ValueError(f"rope segment {item['schedule']!r}: missing 'realisation'")
                out.append(RopeSegment(item["schedule"], r, item.get("layout")))
        else:
            raise ValueError(f"rope: cannot read segment {item!r}")
    return out


# ---------------------------------------------------------------------------------------------
# The error radius (the agreement bound of docs/TRAINED.md)
# ---------------------------------------------------------------------------------------------

class _Bound:
    """Forward error radii for one evaluation (docs/TRAINED.md "The agreement bound").

    For every intermediate quantity z the twin computes ẑ and a float64 radius r_z with the
    invariant: the exact real value z* of the same formula (weights and realised cos/sin taken
    as exact constants) and the value z̃ of *any* evaluation that rounds each +, −, ×, /, √ once
    to nearest in the format of unit roundoff u (exp within 1 ulp), in any summation order,
    satisfy |z* − ẑ| ≤ r_z and |z̃ − z*| ≤ r_z. Then B_z = |ẑ| + 2 r_z bounds |z*|, |z̃| and |ẑ|.
    The steps (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1, §3.5:
    a sum or dot product of n terms in any order has error ≤ γ_n Σ|terms|, γ_n = nu/(1 − nu);
    η = the format's smallest normal bounds the absolute error of an underflowing product):

    * linear ``W x + b`` (n inputs): r = |W| r_x + γ_{n+1}(|W| B_x + |b|) + nη;
    * product ``c·x`` with c exact: |c| r_x; ``q·k`` of computed vectors: B_q r_k + B_k r_q;
      each plus its own rounding γ_n Σ B B (rotation: γ_2(|c|B_x0 + |s|B_x1));
    * add ``x + a``: r_x + r_a + u(B_x + B_a); ReLU is 1-Lipschitz: r unchanged;
    * softmax of a row with score radii ≤ ρ: changing the scores by ≤ ρ changes each weight by a
      factor in [e^{−2ρ}, e^{2ρ}]; rounding multiplies each weight by a factor within κ of 1,
      1 + κ = e^{2uD}(1 + 2u)(1 + u)/((1 − 2u)(1 − γ_{n−1})) with D ≥ max_j (M − S_j) in any
      evaluation (S_j − M rounded: exponent error ≤ uD; exp: 1 ulp ≤ 2u; the sum: γ_{n−1};
      the division: u); so r_α = A (e^{2ρ}(1 + κ) − 1) with A = α̂ e^{2ρ}/(1 − κ) ≥ α*;
    * LayerNorm: through μ, x − μ, the squares, σ² (each as above), σ = √(σ² + ε) with
      σ² + ε ≥ t_lo = max(ε(1 − u), t̂ − 2r_t) in every evaluation (σ² ≥ 0 exactly and as a
      sum of squares), |√a − √b| ≤ |a − b|/(2√t_lo), and (x − μ)/σ with σ ≥ σ_lo = √t_lo(1 − u):
      r = r_c/σ_lo + B_c r_σ/σ_lo² + u B_c/σ_lo.

    The radius is itself computed in float64; its own rounding (relative, of the order of the
    number of operations times 2^-53) is covered by the factor 1.01 applied at the readout. A
    NaN or infinite value gives an infinite radius (no claim). Valid for evaluations that round
    to nearest, with the stable or no-max-subtraction softmax (the online softmax's rescaling
    recurrence is not covered: infinite radius), under sequential, pairwise or exact summation
    (a sum rounded once, or through n − 1 roundings in any order); the realised cos/sin are
    the same constants on both sides (ropesim.rotation_table is the table ``run`` realises).
    """

    def __init__(self, dtype: torch.dtype):
        info = torch.finfo(dtype)
        self.u = info.eps / 2  # unit roundoff: 2^-53 (float64), 2^-24 (float32)
        self.eta = info.tiny   # smallest normal: bounds an underflowing product's error

    def gamma(self, n: int) -> float:
        nu = n * self.u
        return nu / (1 - nu)

    @staticmethod
    def magnitude(v: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return v.detach().double().abs() + 2 * r


def _linear(x, rx, bound, weight, bias):
    """y = W x + b (torch's F.linear over the last axis) and its radius."""
    y = _F.linear(x, weight, bias)
    if bound is None:
        return y, None
    n = weight.shape[1]
    w = weight.detach().double().abs()
    bx = bound.magnitude(x, rx)
    r = _F.linear(rx, w) + bound.gamma(n + 1) * _F.linear(bx, w) + n * bound.eta
    if bias is not None:
        r = r + bound.gamma(n + 1) * bias.detach().double().abs()
    return y, r


def _add(x, rx, a, ra, bound):
    y = x + a
    if bound is None:
        return y, None
    return y, rx + ra + bound.u * (bound.magnitude(x, rx) + bound.magnitude(a, ra))


# ---------------------------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------------------------

def _parameter(tensor: torch.Tensor) -> nn.Parameter:
    return nn.Parameter(tensor)


class LayerNorm(nn.Module):
    """LayerNorm as the spec computes it (docs/MODEL_SPEC.md): μ = Σx/d, σ² = Σ(x − μ)²/d,
    σ = √(σ² + ε), y = (x − μ)/σ · γ + β (γ, β optional: None = ones / zeros). ε is a buffer
    in the module's dtype (the value the exported spec holds)."""

    def __init__(self, d: int, epsilon: float = 1e-5, gain: bool = True, bias: bool = True,
                 dtype=torch.float32):
        super().__init__()
        self.gain = _parameter(torch.ones(d, dtype=dtype)) if gain else None
        self.bias = _parameter(torch.zeros(d, dtype=dtype)) if bias else None
        self.register_buffer("epsilon", torch.tensor(epsilon, dtype=dtype))

    def forward(self, x, rx=None, bound=None):
        d = x.shape[-1]
        mean = x.sum(-1, keepdim=True) / d
        centred = x - mean
        square = centred * centred
        variance = square.sum(-1, keepdim=True) / d
        t = variance + self.epsilon
        sigma = torch.sqrt(t)
        z = centred / sigma
        w = z * self.gain if self.gain is not None else z
        y = w + self.bias if self.bias is not None else w
        if bound is None:
            return y, None
        u, eta = bound.u, bound.eta
        mag = bound.magnitude
        bx = mag(x, rx)
        r_mean = rx.sum(-1, keepdim=True) / d + bound.gamma(d) * bx.sum(-1, keepdim=True) / d
        r_c = rx + r_mean + u * (bx + mag(mean, r_mean))
        b_c = mag(centred, r_c)
        r_sq = 2 * b_c * r_c + r_c * r_c + u * b_c * b_c + eta
        b_sq = mag(square, r_sq)
        r_var = r_sq.sum(-1, keepdim=True) / d + bound.gamma(d) * b_sq.sum(-1, keepdim=True) / d
        eps = float(self.epsilon)
        r_t = r_var + u * (mag(variance, r_var) + eps)
        t_hat = t.detach().double()
        t_lo = torch.clamp(t_hat - 2 * r_t, min=eps * (1 - u))
        sigma_lo = torch.sqrt(t_lo) * (1 - u)
        r_sigma = r_t / (2 * torch.sqrt(t_lo)) + u * torch.sqrt(t_hat + 2 * r_t) * (1 + u)
        r = r_c / sigma_lo + b_c * r_sigma / (sigma_lo * sigma_lo) + u * b_c / sigma_lo + eta
        if self.gain is not None:
            g = self.gain.detach().double().abs()
            r = g * r + u * g * mag(z, r) + eta
        if self.bias is not None:
            r = r + u * (mag(w, r) + self.bias.detach().double().abs())
        return y, r

    def to_spec(self) -> dict:
        out = {}
        if self.gain is not None:
            out["gain"] = _vector(self.gain)
        if self.bias is not None:
            out["bias"] = _vector(self.bias)
        out["epsilon"] = exact_decimal(float(self.epsilon))
        return out


class AttentionHead(nn.Module):
    """One head (THEORY §2): query, key (head_dim × d), value (value_dim × d), output
    (d × value_dim), optional biases, the rope segments (empty: NoPE) and an optional score
    scale (a buffer; None = folded into the weights, THEORY §2.1)."""

    def __init__(self, d_model: int, head_dim: int, value_dim: int, rope=None,
                 bias: bool = True, scale: float | None = None, name: str = "",
                 dtype=torch.float32):
        super().__init__()
        self.name = name
        self.head_dim, self.value_dim = head_dim, value_dim
        self.query = _parameter(torch.zeros(head_dim, d_model, dtype=dtype))
        self.key = _parameter(torch.zeros(head_dim, d_model, dtype=dtype))
        self.value = _parameter(torch.zeros(value_dim, d_model, dtype=dtype))
        self.output = _parameter(torch.zeros(d_model, value_dim, dtype=dtype))
        self.query_bias = _parameter(torch.zeros(head_dim, dtype=dtype)) if bias else None
        self.key_bias = _parameter(torch.zeros(head_dim, dtype=dtype)) if bias else None
        self.value_bias = _parameter(torch.zeros(value_dim, dtype=dtype)) if bias else None
        if scale is None:
            self.scale = None
        else:
            self.register_buffer("scale", torch.tensor(scale, dtype=dtype))
        self.rope = _segments(rope)
        if self.rope:
            covered = sum(s.dimension for s in self.rope)
            if covered != head_dim:
                raise ValueError(f"rope: the segments cover {covered} coordinates, head_dim is "
                                 f"{head_dim}")
        # the rotated pairs over the whole head: (segment, block, i0, i1)
        self._pairs = []
        offset = 0
        for k, seg in enumerate(self.rope):
            for d, i0, i1 in seg.pairs():
                self._pairs.append((k, d, offset + i0, offset + i1))
            offset += seg.dimension

    def rotate(self, x, rx, bound, positions: torch.Tensor):
        """R̂_p x for x of shape (..., T, head_dim), positions (T,) (THEORY §2.1)."""
        if not self._pairs:
            return x, rx
        last = int(positions.max()) + 1
        cos, sin = [], []
        for k, d, _, _ in self._pairs:
            c, s = self.rope[k].table(x.dtype, last)
            cos.append(c[positions, d])
            sin.append(s[positions, d])
        c = torch.stack(cos, -1)  # (T, pairs)
        s = torch.stack(sin, -1)
        i0 = torch.tensor([p[2] for p in self._pairs])
        i1 = torch.tensor([p[3] for p in self._pairs])
        x0, x1 = x[..., i0], x[..., i1]
        y0 = c * x0 - s * x1
        y1 = s * x0 + c * x1
        y = x.index_copy(-1, i0, y0).index_copy(-1, i1, y1)
        if bound is None:
            return y, None
        cd, sd = c.double().abs(), s.double().abs()
        r0, r1 = rx[..., i0], rx[..., i1]
        b0, b1 = bound.magnitude(x0, r0), bound.magnitude(x1, r1)
        g2 = bound.gamma(2)
        ry0 = cd * r0 + sd * r1 + g2 * (cd * b0 + sd * b1) + 2 * bound.eta
        ry1 = sd * r0 + cd * r1 + g2 * (sd * b0 + cd * b1) + 2 * bound.eta
        return y, rx.index_copy(-1, i0, ry0).index_copy(-1, i1, ry1)

    def to_spec(self) -> dict:
        out = {}
        if self.name:
            out["name"] = self.name
        out.update({"head_dim": self.head_dim, "value_dim": self.value_dim,
                    "query": _matrix(self.query), "key": _matrix(self.key),
                    "value": _matrix(self.value), "output": _matrix(self.output)})
        for name in ("query_bias", "key_bias", "value_bias"):
            if getattr(self, name) is not None:
                out[name] = _vector(getattr(self, name))
        if self.scale is not None:
            out["scale"] = exact_decimal(float(self.scale))
        if self.rope:
            out["rope"] = [s.to_spec() for s in self.rope]
        return out


class FeedForward(nn.Module):
    """FFN(h) = W2·ReLU(W1·h + b1) + b2 (THEORY §2); b1, b2 optional."""

    def __init__(self, d_model: int, hidden: int, bias: bool = True, dtype=torch.float32):
        super().__init__()
        self.w1 = _parameter(torch.zeros(hidden, d_model, dtype=dtype))
        self.b1 = _parameter(torch.zeros(hidden, dtype=dtype)) if bias else None
        self.w2 = _parameter(torch.zeros(d_model, hidden, dtype=dtype))
        self.b2 = _parameter(torch.zeros(d_model, dtype=dtype)) if bias else None

    def forward(self, h, rh=None, bound=None):
        z, rz = _linear(h, rh, bound, self.w1, self.b1)
        z = torch.relu(z)  # 1-Lipschitz and exact: the radius is unchanged
        return _linear(z, rz, bound, self.w2, self.b2)

    def to_spec(self) -> dict:
        out = {"hidden": self.w1.shape[0], "w1": _matrix(self.w1)}
        if self.b1 is not None:
            out["b1"] = _vector(self.b1)
        out["w2"] = _matrix(self.w2)
        if self.b2 is not None:
            out["b2"] = _vector(self.b2)
        return out


class Layer(nn.Module):
    """One layer: heads (their outputs summed through the stacked output matrices plus
    attention_bias, then the residual) and the FFN sublayer; LayerNorms where given."""

    def __init__(self, heads: Sequence[AttentionHead], attention_bias: nn.Parameter | None,
                 ffn: FeedForward | None, attention_norm: LayerNorm | None,
                 ffn_norm: LayerNorm | None):
        super().__init__()
        self.heads = nn.ModuleList(heads)
        self.attention_bias = attention_bias
        self.ffn = ffn
        self.attention_norm = attention_norm
        self.ffn_norm = ffn_norm

    def to_spec(self) -> dict:
        out = {}
        if len(self.heads):
            out["heads"] = [h.to_spec() for h in self.heads]
        if self.attention_bias is not None:
            out["attention_bias"] = _vector(self.attention_bias)
        if self.attention_norm is not None:
            out["attention_norm"] = self.attention_norm.to_spec()
        if self.ffn is not None:
            out["ffn"] = self.ffn.to_spec()
        if self.ffn_norm is not None:
            out["ffn_norm"] = self.ffn_norm.to_spec()
        return out


def _vector(p: torch.Tensor) -> list:
    return [exact_decimal(v) for v in p.detach().double().tolist()]


def _matrix(p: torch.Tensor) -> list:
    return [[exact_decimal(v) for v in row] for row in p.detach().double().tolist()]


class RopeTransformer(nn.Module):
    """The PyTorch twin of ropesim's F-transformer (module docstring; docs/TRAINED.md).

    Builds a model of uniform shape with random weights (seeded, N(0, 1/fan_in) matrices, zero
    biases, unit LayerNorm gains), trainable in float32:

    * `alphabet`: a str of one-character symbols or a list of symbols (no whitespace, not
      BOS/EOS); `d_model`, `layers`, `heads` per layer, `head_dim` (default d_model // heads),
      `value_dim` (default head_dim), `ffn_hidden` (0: no FFN; default 2·d_model);
    * `rope`: the rope of every head (or a callable (layer, head) -> rope): None (NoPE), a
      schedule (``"conventional:base=10000,dim=8"``, realisation r1), (schedule,
      realisation) (``("periodic:m=2,3", "r3")``), a spec segment dict, or a list of segments;
      the segments must cover head_dim;
    * `bos` (BOS at 0) or LC25's ``w EOS``; `masking` ``strict``/``non-strict``; `softmax`
      ``stable``/``no-max-subtraction``/``online``; `layer_norm` None, ``"post"`` or ``"pre"``
      (LN1 and LN2 in every layer, ε = `epsilon`); `final_norm`; `bias` (every bias present);
      `scale` (a score scale, default None: folded into the weights).

    Raises ValueError for a bad option (one line naming it and the accepted values) and
    TypeError for a value of the wrong type.
    """

    def __init__(self, alphabet="ab", d_model: int = 8, layers: int = 1, heads: int = 1,
                 head_dim: int | None = None, value_dim: int | None = None,
                 ffn_hidden: int | None = None, rope=None, bos: bool = True,
                 masking: str = "strict", softmax: str = "stable",
                 layer_norm: str | None = None, final_norm: bool = False, bias: bool = True,
                 epsilon: float = 1e-5, scale: float | None = None, seed: int = 0,
                 name: str = "ropesim-torch-twin"):
        super().__init__()
        self._set_options(alphabet, bos, masking, softmax, layer_norm, name)
        for what, value, low in (("d_model", d_model, 1), ("layers", layers, 0),
                                 ("heads", heads, 0), ("seed", seed, 0)):
            _check_int(what, value, low)
        if head_dim is None:
            head_dim = d_model // heads if heads else 2
        _check_int("head_dim", head_dim, 1)
        value_dim = head_dim if value_dim is None else value_dim
        _check_int("value_dim", value_dim, 1)
        ffn_hidden = 2 * d_model if ffn_hidden is None else ffn_hidden
        _check_int("ffn_hidden", ffn_hidden, 0)
        self.d_model = d_model
        n_symbols = len(self.alphabet)
        self.embedding = _parameter(torch.zeros(n_symbols + 2, d_model))  # symbols, BOS, EOS
        layer_list = []
        for l in range(layers):
            head_list = []
            for h in range(heads):
                r = rope(l, h) if callable(rope) else rope
                head_list.append(AttentionHead(d_model, head_dim, value_dim, r, bias, scale))
            norm = layer_norm is not None
            layer_list.append(Layer(
                head_list,
                _parameter(torch.zeros(d_model)) if bias and heads else None,
                FeedForward(d_model, ffn_hidden, bias) if ffn_hidden else None,
                LayerNorm(d_model, epsilon) if norm else None,
                LayerNorm(d_model, epsilon) if norm and ffn_hidden else None))
        self.layers = nn.ModuleList(layer_list)
        self.final_norm = LayerNorm(d_model, epsilon) if final_norm else None
        self.classifier = _parameter(torch.zeros(d_model))
        self.classifier_bias = _parameter(torch.zeros(()))
        self._initialise(seed)

    # -- construction helpers ----------------------------------------------------------------

    def _set_options(self, alphabet, bos, masking, softmax, layer_norm, name):
        if isinstance(alphabet, str):
            alphabet = list(alphabet)
        if not isinstance(alphabet, (list, tuple)) or not alphabet:
            raise ValueError(f"alphabet: expected a non-empty str or list of symbols, got "
                             f"{alphabet!r}")
        for s in alphabet:
            if not isinstance(s, str) or not s or any(c.isspace() for c in s) \
                    or s in ("BOS", "EOS"):
                raise ValueError(f"alphabet: symbol {s!r}: symbols are non-empty strings without "
                                 f"whitespace, not BOS or EOS")
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("alphabet: symbols must be distinct")
        if not isinstance(bos, bool):
            raise TypeError(f"bos: expected a bool, got {type(bos).__name__}")
        if masking not in _MASKINGS:
            raise ValueError(f"masking: {masking!r}; accepted: strict, non-strict")
        if softmax not in _SOFTMAXES:
            raise ValueError(f"softmax: {softmax!r}; accepted: {', '.join(_SOFTMAXES)}")
        if layer_norm not in _NORMS:
            raise ValueError(f"layer_norm: {layer_norm!r}; accepted: None, 'post', 'pre'")
        self.alphabet = list(alphabet)
        self._index = {s: k for k, s in enumerate(self.alphabet)}
        self.bos, self.masking, self.softmax_variant = bos, masking, softmax
        self.norm_placement = layer_norm or "post"
        self.name = name
        self.description = ""

    def _initialise(self, seed: int):
        g = torch.Generator().manual_seed(seed)

        def fill(p, std):
            with torch.no_grad():
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * std)

        fill(self.embedding, 1.0)
        if not self.bos:  # the unused BOS row: zeros, as from_model_spec reads a spec without BOS
            with torch.no_grad():
                self.embedding[len(self.alphabet)].zero_()
        for layer in self.layers:
            for head in layer.heads:
                for p in (head.query, head.key, head.value):
                    fill(p, 1 / _math.sqrt(p.shape[1]))
                fill(head.output, 1 / _math.sqrt(head.output.shape[1] * len(layer.heads)))
            if layer.ffn is not None:
                fill(layer.ffn.w1, 1 / _math.sqrt(layer.ffn.w1.shape[1]))
                fill(layer.ffn.w2, 1 / _math.sqrt(layer.ffn.w2.shape[1]))
        fill(self.classifier, 1 / _math.sqrt(self.d_model))

    # -- words ---------------------------------------------------------------------------------

    def tokenize(self, word) -> list[int]:
        """The symbol indices of `word`: a str split on whitespace if it has any, else
        character by character (as ``ropesim run --input``), or a list of symbols. Raises
        ValueError naming the first symbol outside the alphabet."""
        if isinstance(word, str):
            symbols = word.split() if any(c.isspace() for c in word) else list(word)
        elif isinstance(word, (list, tuple)):
            symbols = list(word)
        else:
            raise TypeError(f"word: expected a str or a list of symbols, got "
                            f"{type(word).__name__}")
        out = []
        for s in symbols:
            if s not in self._index:
                raise ValueError(f"word: symbol {s!r} is not in the alphabet "
                                 f"{' '.join(self.alphabet)}")
            out.append(self._index[s])
        return out

    def _tokens(self, indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(token ids (B, T), positions (T,)) of words of one length N: BOS w EOS at 0..N+1,
        or w EOS at 1..N+1."""
        b, n = indices.shape
        n_symbols = len(self.alphabet)
        eos = torch.full((b, 1), n_symbols + 1, dtype=torch.long)
        if self.bos:
            bos = torch.full((b, 1), n_symbols, dtype=torch.long)
            return torch.cat([bos, indices, eos], 1), torch.arange(0, n + 2)
        return torch.cat([indices, eos], 1), torch.arange(1, n + 2)

    # -- the forward pass ----------------------------------------------------------------------

    def _forward_group(self, indices: torch.Tensor, with_bound: bool):
        """Logits (B,) of B words of one length (indices (B, N)) and, with `with_bound`, their
        float64 radii (class _Bound)."""
        dtype = self.classifier.dtype
        _format_of(dtype)
        bound = _Bound(dtype) if with_bound else None
        tokens, positions = self._tokens(indices)
        x = self.embedding[tokens]
        rx = torch.zeros(x.shape, dtype=torch.float64) if bound is not None else None
        t = tokens.shape[1]
        keys = torch.arange(t)
        visible = keys[None, :] < keys[:, None] if self.masking == "strict" \
            else keys[None, :] <= keys[:, None]
        pre = self.norm_placement == "pre"
        for layer in self.layers:
            if len(layer.heads):
                inp, rin = x, rx
                if pre and layer.attention_norm is not None:
                    inp, rin = layer.attention_norm(x, rx, bound)
                outs, routs = [], []
                for head in layer.heads:
                    o, ro = self._head(head, inp, rin, bound, positions, visible)
                    outs.append(o)
                    routs.append(ro)
                stacked = torch.cat([h.output for h in layer.heads], 1)
                a, ra = _linear(torch.cat(outs, -1),
                                torch.cat(routs, -1) if bound is not None else None,
                                bound, stacked, layer.attention_bias)
                x, rx = _add(x, rx, a, ra, bound)
                if not pre and layer.attention_norm is not None:
                    x, rx = layer.attention_norm(x, rx, bound)
            if layer.ffn is not None:
                inp, rin = x, rx
                if pre and layer.ffn_norm is not None:
                    inp, rin = layer.ffn_norm(x, rx, bound)
                f, rf = layer.ffn(inp, rin, bound)
                x, rx = _add(x, rx, f, rf, bound)
                if not pre and layer.ffn_norm is not None:
                    x, rx = layer.ffn_norm(x, rx, bound)
        x_eos = x[:, -1, :]
        r_eos = rx[:, -1, :] if bound is not None else None
        if self.final_norm is not None:
            x_eos, r_eos = self.final_norm(x_eos, r_eos, bound)
        y, ry = _linear(x_eos, r_eos, bound, self.classifier[None, :], self.classifier_bias[None])
        y = y[:, 0]
        if bound is None:
            return y, None
        ry = ry[:, 0] * 1.01
        ry = torch.where(torch.isfinite(ry) & torch.isfinite(y.detach()), ry,
                         torch.full_like(ry, _math.inf))
        return y, ry

    def _head(self, head: AttentionHead, x, rx, bound, positions, visible):
        """One head's output o_p = Σ_q α_{p,q} v_q for every token (B, T, value_dim)."""
        q, rq = _linear(x, rx, bound, head.query, head.query_bias)
        k, rk = _linear(x, rx, bound, head.key, head.key_bias)
        v, rv = _linear(x, rx, bound, head.value, head.value_bias)
        q, rq = head.rotate(q, rq, bound, positions)
        k, rk = head.rotate(k, rk, bound, positions)
        scores = q @ k.transpose(-1, -2)  # (B, T, T): S[p, q] = q_p · k_q
        if bound is not None:
            bq, bk = bound.magnitude(q, rq), bound.magnitude(k, rk)
            n = head.head_dim
            rs = bq @ rk.transpose(-1, -2) + rq @ bk.transpose(-1, -2) \
                + bound.gamma(n) * (bq @ bk.transpose(-1, -2)) + n * bound.eta
        if head.scale is not None:
            s_before = scores
            scores = scores * head.scale
            if bound is not None:
                sc = abs(float(head.scale))
                rs = sc * rs + bound.u * sc * bound.magnitude(s_before, rs) + bound.eta
        any_visible = visible.any(-1, keepdim=True)  # (T, 1)
        masked = scores.masked_fill(~visible, -_math.inf)
        if self.softmax_variant == "no-max-subtraction":
            shifted = masked
        else:  # stable; online is the same real function
            m = masked.amax(-1, keepdim=True)
            m = torch.where(any_visible, m, torch.zeros_like(m))
            shifted = masked - m
        e = torch.exp(shifted)
        z = e.sum(-1, keepdim=True)
        alpha = e / torch.where(any_visible, z, torch.ones_like(z))
        o = alpha @ v  # masked weights are exactly 0
        if bound is None:
            return o, None
        ra = self._softmax_radius(alpha, shifted, z, rs, visible, bound)
        ba, bv = bound.magnitude(alpha, ra), bound.magnitude(v, rv)
        t = visible.shape[0]
        ro = ba @ rv + ra @ bv + bound.gamma(t) * (ba @ bv) + t * bound.eta
        return o, ro

    def _softmax_radius(self, alpha, shifted, z, rs, visible, bound):
        """The radius of the softmax weights (class _Bound: the softmax step)."""
        u, eta = bound.u, bound.eta
        t = visible.shape[0]
        if self.softmax_variant == "online":  # its rescaling recurrence is not covered: no claim
            return torch.where(visible, torch.full_like(rs, _math.inf), torch.zeros_like(rs))
        rho = torch.where(visible, rs, torch.zeros_like(rs)).amax(-1, keepdim=True)
        if self.softmax_variant == "no-max-subtraction":
            d = torch.zeros_like(rho)
        else:
            spread = torch.where(visible, -shifted.detach().double(), torch.zeros_like(rs))
            d = spread.amax(-1, keepdim=True) + 4 * rho
        kappa = torch.exp(2 * u * d) * (1 + 2 * u) * (1 + u) / ((1 - 2 * u)
                                                                 * (1 - bound.gamma(t))) - 1
        grow = torch.exp(2 * rho)
        a_hi = alpha.detach().double() * grow / (1 - kappa)
        # underflowing exponentials: an absolute error η per term, over Z (Z ≥ 1 for stable)
        zd = z.detach().double()
        if self.softmax_variant == "no-max-subtraction":
            z_lo = zd / grow * (1 - kappa) - (t + 1) * eta
            absolute = torch.where(z_lo > 0, 4 * (t + 1) * eta / z_lo,
                                   torch.full_like(z_lo, _math.inf))
        else:
            absolute = torch.full_like(zd, 4 * (t + 1) * eta)
        r = a_hi * (grow * (1 + kappa) - 1) + absolute
        return torch.where(visible, r, torch.zeros_like(r))

    def forward(self, words: Sequence) -> torch.Tensor:
        """The classifier values y (shape (len(words),), the module's dtype) of `words` (str or
        lists of symbols), differentiable. Words are grouped by length, one batch per length."""
        return self._logits(words, False)[0]

    def _logits(self, words, with_bound: bool):
        if isinstance(words, (str, bytes)):
            raise TypeError("words: expected a list of words; use logit(word) for one word")
        groups: dict[int, list[int]] = {}
        encoded = [self.tokenize(w) for w in words]
        for k, w in enumerate(encoded):
            groups.setdefault(len(w), []).append(k)
        dtype = self.classifier.dtype
        y = torch.zeros(len(encoded), dtype=dtype)
        r = torch.zeros(len(encoded), dtype=torch.float64) if with_bound else None
        parts = []
        for n, members in sorted(groups.items()):
            indices = torch.tensor([encoded[k] for k in members], dtype=torch.long)
            indices = indices.reshape(len(members), n)
            yg, rg = self._forward_group(indices, with_bound)
            parts.append((torch.tensor(members, dtype=torch.long), yg, rg))
        if not parts:
            return y, r
        order = torch.cat([p[0] for p in parts])
        y = torch.zeros(len(encoded), dtype=dtype).index_put((order,),
                                                             torch.cat([p[1] for p in parts]))
        if with_bound:
            r = r.index_put((order,), torch.cat([p[2] for p in parts]))
        return y, r

    def logits_with_bound(self, words: Sequence) -> tuple[torch.Tensor, torch.Tensor]:
        """(y, r): the logits in the module's dtype and float64 radii with |y − y*| ≤ r and
        |y_F − y*| ≤ r for y* the exact value and y_F any round-to-nearest evaluation in the
        dtype's format (``ropesim run --format fp64|fp32``); so |y − y_F| ≤ 2r (class _Bound,
        docs/TRAINED.md). r is inf where a value is not finite. No gradient."""
        with torch.no_grad():
            return self._logits(words, True)

    def logit(self, word) -> float:
        """y on the EOS representation for one word, computed in the module's dtype."""
        with torch.no_grad():
            return float(self._logits([word], False)[0][0])

    def accepts(self, word) -> bool:
        """y > 0 (NaN rejects), as ropesim decides (THEORY §2)."""
        return self.logit(word) > 0

    # -- export ----------------------------------------------------------------------------------

    def to_spec(self, format: str | None = None, rounding: str | None = None,
                summation: str | None = None, accumulator: str | None = None) -> dict:
        """The model spec (docs/MODEL_SPEC.md) as a dict: every parameter as the exact decimal of
        its value, and the policy `format`, `rounding`, `summation`, `accumulator` (ropesim
        rounds each number once into F when it reads the file). Defaults: the policy the model
        was read with (``from_model_spec``), else bf16, nearest-even, sequential."""
        policy = dict(getattr(self, "policy", None) or {"format": "bf16"})
        for what, text in (("format", format), ("rounding", rounding),
                           ("summation", summation), ("accumulator", accumulator)):
            if text is None:
                continue
            if not isinstance(text, str):
                raise TypeError(f"{what}: expected a str, got {type(text).__name__}")
            policy[what] = text
        n = len(self.alphabet)
        emb = self.embedding.detach().double()
        embedding = {"eos": [exact_decimal(v) for v in emb[n + 1].tolist()],
                     "symbols": {s: [exact_decimal(v) for v in emb[k].tolist()]
                                 for k, s in enumerate(self.alphabet)}}
        if self.bos:
            embedding = {"bos": [exact_decimal(v) for v in emb[n].tolist()], **embedding}
        spec = {"ropesim_model": 1, "name": self.name}
        if self.description:
            spec["description"] = self.description
        spec.update({
            "policy": policy,
            "architecture": {"bos": self.bos, "masking": self.masking,
                             "softmax": self.softmax_variant,
                             "layer_norm": self.norm_placement},
            "d_model": self.d_model,
            "alphabet": list(self.alphabet),
            "embedding": embedding,
            "layers": [layer.to_spec() for layer in self.layers],
        })
        if self.final_norm is not None:
            spec["final_norm"] = self.final_norm.to_spec()
        spec["classifier"] = {"weights": _vector(self.classifier),
                              "bias": exact_decimal(float(self.classifier_bias))}
        return spec

    def to_model_spec(self, path, format: str | None = None, rounding: str | None = None,
                      summation: str | None = None, accumulator: str | None = None) -> dict:
        """Writes the model spec (``to_spec``) to `path` for ``ropesim run PATH --input WORD``
        and returns it (as a dict). The weights are the module's values exactly; ropesim
        rounds each once into `format` when it reads them (so a float32 weight that is not a
        bf16 value runs as its nearest-even bf16 value at bf16; at ``--format fp32`` or fp64
        the weights are the module's). ropesim's own reader checks the spec before it replaces
        `path` (it runs the empty word): ValueError with its one-line message if it refuses
        it (a bad format name, say)."""
        spec = self.to_spec(format, rounding, summation, accumulator)
        path = _os.fspath(path)
        text = _json.dumps(spec, indent=1) + "\n"
        try:  # read and run by the library as `ropesim run PATH` would, before writing
            _ropesim.run_model(_ropesim.parse_model(text), "", False)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        tmp = f"{path}.tmp{_os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        _os.replace(tmp, path)
        return spec

    def extra_repr(self) -> str:
        return (f"alphabet={self.alphabet!r}, "
                f"d_model={self.d_model}, layers={len(self.layers)}, bos={self.bos}, "
                f"masking={self.masking!r}, softmax={self.softmax_variant!r}, "
                f"layer_norm={self.norm_placement!r}")


def train(model: RopeTransformer, words: Sequence, labels: Sequence, steps: int = 200,
          lr: float = 0.01, batch_size: int | None = 64, seed: int = 0,
          progress: Callable[[int, float], None] | None = None) -> list[float]:
    """Trains `model` in place to accept the words labelled true: Adam (learning rate `lr`) on
    the binary cross-entropy of sigmoid(y) (y the logit, accept iff y > 0), `steps` steps on
    minibatches of `batch_size` words drawn without replacement per epoch (None: every word
    each step), seeded by `seed`. Returns the loss of every step (floats). `progress(step,
    loss)` is called after each step when given. The training experiment (issue 37 item 2;
    docs/TRAINED.md) is ``ropesim.train``, which trains through this function.

    Raises ValueError when `words` and `labels` differ in length or are empty, or a count is
    out of range; TypeError for a count that is not an int.
    """
    words, labels = list(words), [bool(x) for x in labels]
    if not words or len(words) != len(labels):
        raise ValueError(f"words, labels: expected the same non-empty length, got {len(words)} "
                         f"and {len(labels)}")
    _check_int("steps", steps, 0)
    _check_int("seed", seed, 0)
    if batch_size is not None:
        _check_int("batch_size", batch_size, 1)
    target = torch.tensor(labels, dtype=model.classifier.dtype)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    order, cursor = torch.randperm(len(words), generator=g), 0
    losses = []
    model.train()
    for step in range(steps):
        if batch_size is None or batch_size >= len(words):
            batch = torch.arange(len(words))
        else:
            if cursor + batch_size > len(words):
                order, cursor = torch.randperm(len(words), generator=g), 0
            batch = order[cursor:cursor + batch_size]
            cursor += batch_size
        optimiser.zero_grad()
        y = model([words[k] for k in batch.tolist()])
        loss = _F.binary_cross_entropy_with_logits(y, target[batch])
        loss.backward()
        optimiser.step()
        losses.append(float(loss))
        if progress is not None:
            progress(step, losses[-1])
    model.eval()
    return losses


def _check_int(what: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected an int, got {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{what}: must be at least {low}, got {value}")


# ---------------------------------------------------------------------------------------------
# Import
# ---------------------------------------------------------------------------------------------

def _load_json(path) -> dict:
    with open(path, encoding="utf-8") as f:
        text = f.read()

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"{path}: duplicate key {k!r}")
            out[k] = v
        return out

    return _json.loads(text, parse_float=_SpecNumber, parse_int=_SpecNumber,
                       object_pairs_hook=pairs)


def _strip(obj: dict) -> dict:
    """`obj` without `comment` and `_...` fields (ignored by ropesim's reader)."""
    return {k: v for k, v in obj.items() if k != "comment" and not k.startswith("_")}


def _check_fields(obj, path: str, allowed: Iterable[str]) -> dict:
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected an object, got {type(obj).__name__}")
    obj = _strip(obj)
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise ValueError(f"{path}.{unknown[0]}: unknown field (accepted: {', '.join(allowed)})")
    return obj


def _int(value, path: str) -> int:
    if not isinstance(value, _SpecNumber) or not _re.fullmatch(r"[0-9]+", value):
        raise ValueError(f"{path}: expected a non-negative integer, got {value!r}")
    return int(value)


def _read_vector(value, n: int, path: str, dtype) -> torch.Tensor:
    if value == "zeros" and not isinstance(value, _SpecNumber):
        return torch.zeros(n, dtype=dtype)
    if not isinstance(value, list) or len(value) != n:
        raise ValueError(f"{path}: expected an array of {n} numbers or \"zeros\"")
    return torch.tensor([_round_to(_spec_value(v, f"{path}[{i}]"), dtype)
                         for i, v in enumerate(value)], dtype=dtype)


def _read_matrix(value, rows: int, cols: int, path: str, dtype) -> torch.Tensor:
    if isinstance(value, str) and not isinstance(value, _SpecNumber):
        if value == "zeros":
            return torch.zeros(rows, cols, dtype=dtype)
        if value == "identity":
            return torch.eye(rows, cols, dtype=dtype)
    if isinstance(value, dict):
        value = _check_fields(value, path, ["sparse"])
        out = torch.zeros(rows, cols, dtype=dtype)
        seen = set()
        for i, entry in enumerate(value.get("sparse", [])):
            if not isinstance(entry, list) or len(entry) != 3:
                raise ValueError(f"{path}.sparse[{i}]: expected [row, col, value]")
            r = _int(entry[0], f"{path}.sparse[{i}][0]")
            c = _int(entry[1], f"{path}.sparse[{i}][1]")
            if r >= rows or c >= cols or (r, c) in seen:
                raise ValueError(f"{path}.sparse[{i}]: entry ({r}, {c}) outside {rows} x {cols} "
                                 f"or given twice")
            seen.add((r, c))
            out[r, c] = _round_to(_spec_value(entry[2], f"{path}.sparse[{i}][2]"), dtype)
        return out
    if not isinstance(value, list) or len(value) != rows:
        raise ValueError(f"{path}: expected {rows} x {cols} (an array of rows, \"zeros\", "
                         f"\"identity\" or {{\"sparse\": ...}})")
    return torch.stack([_read_vector(row, cols, f"{path}[{r}]", dtype)
                        for r, row in enumerate(value)]) if rows else torch.zeros(0, cols,
                                                                                 dtype=dtype)


def _read_norm(value, d: int, path: str, dtype) -> LayerNorm:
    value = _check_fields(value, path, ["gain", "bias", "epsilon"])
    eps = _round_to(_spec_value(value["epsilon"], f"{path}.epsilon"), dtype) \
        if "epsilon" in value else _round_to(_Fraction("1e-5"), dtype)
    norm = LayerNorm(d, eps, "gain" in value, "bias" in value, dtype)
    with torch.no_grad():
        if norm.gain is not None:
            norm.gain.copy_(_read_vector(value["gain"], d, f"{path}.gain", dtype))
        if norm.bias is not None:
            norm.bias.copy_(_read_vector(value["bias"], d, f"{path}.bias", dtype))
    return norm


def from_model_spec(path, dtype: torch.dtype = torch.float32) -> RopeTransformer:
    """A RopeTransformer holding the model spec at `path` (docs/MODEL_SPEC.md, schema 1).

    Every number is read exactly (JSON numbers from their source text, strings as decimals,
    fractions, ``inf``, ``-0``) and rounded once, to nearest with ties to even, into `dtype`
    (float32 or float64): a spec written by ``to_model_spec`` loads back to identical
    parameters. The policy (format, rounding, summation, accumulator) is kept for
    ``to_spec``/``to_model_spec``'s defaults as ``model.policy``. Raises ValueError naming the
    JSON path for a malformed spec or a feature the twin does not compute (mixed-format heads'
    ``formats`` blocks, pipeline realisations, a rope segment ``format``).
    """
    _format_of(dtype)
    spec = _check_fields(_load_json(path), "model spec",
                         ["ropesim_model", "name", "description", "policy", "architecture",
                          "d_model", "coordinates", "alphabet", "embedding", "layers",
                          "final_norm", "classifier"])
    if spec.get("ropesim_model") != "1":
        raise ValueError(f"{path}: ropesim_model: expected 1, got {spec.get('ropesim_model')!r}")
    policy = _check_fields(spec.get("policy"), "policy",
                           ["format", "rounding", "summation", "accumulator"])
    if "format" not in policy:
        raise ValueError("policy.format: missing")
    arch = _check_fields(spec.get("architecture", {}), "architecture",
                         ["bos", "masking", "softmax", "layer_norm"])
    d = _int(spec.get("d_model"), "d_model")
    if d < 1:
        raise ValueError("d_model: must be at least 1")
    model = RopeTransformer.__new__(RopeTransformer)
    nn.Module.__init__(model)
    model._set_options(spec.get("alphabet"), arch.get("bos", True), arch.get("masking", "strict"),
                       arch.get("softmax", "stable"), arch.get("layer_norm", "post"),
                       spec.get("name", "ropesim-torch-twin"))
    model.description = spec.get("description", "")
    model.policy = {k: str(v) for k, v in policy.items()}
    model.d_model = d
    emb = _check_fields(spec.get("embedding"), "embedding", ["bos", "eos", "symbols"])
    if model.bos != ("bos" in emb):
        raise ValueError("embedding.bos: required iff architecture.bos is true")
    symbols = emb.get("symbols")
    if not isinstance(symbols, dict) or set(symbols) != set(model.alphabet):
        raise ValueError("embedding.symbols: expected one vector per alphabet symbol")
    rows = [_read_vector(symbols[s], d, f"embedding.symbols.{s}", dtype) for s in model.alphabet]
    rows.append(_read_vector(emb["bos"], d, "embedding.bos", dtype) if model.bos
                else torch.zeros(d, dtype=dtype))
    rows.append(_read_vector(emb.get("eos"), d, "embedding.eos", dtype))
    model.embedding = _parameter(torch.stack(rows))
    layers = spec.get("layers", [])
    if not isinstance(layers, list):
        raise ValueError("layers: expected an array of layers")
    model.layers = nn.ModuleList(_read_layer(lj, d, f"layers[{l}]", dtype)
                                 for l, lj in enumerate(layers))
    model.final_norm = _read_norm(spec["final_norm"], d, "final_norm", dtype) \
        if spec.get("final_norm") is not None else None
    cls = _check_fields(spec.get("classifier"), "classifier", ["weights", "bias"])
    model.classifier = _parameter(_read_vector(cls.get("weights"), d, "classifier.weights", dtype))
    bias = _round_to(_spec_value(cls["bias"], "classifier.bias"), dtype) if "bias" in cls else 0.0
    model.classifier_bias = _parameter(torch.tensor(bias, dtype=dtype))
    return model


def _read_layer(value, d: int, path: str, dtype) -> Layer:
    value = _check_fields(value, path, ["heads", "attention_bias", "attention_norm", "ffn",
                                        "ffn_norm"])
    heads = [_read_head(h, d, f"{path}.heads[{k}]", dtype)
             for k, h in enumerate(value.get("heads", []))]
    attention_bias = _parameter(_read_vector(value["attention_bias"], d,
                                             f"{path}.attention_bias", dtype)) \
        if "attention_bias" in value else None
    ffn = None
    if value.get("ffn") is not None:
        fj = _check_fields(value["ffn"], f"{path}.ffn", ["hidden", "w1", "b1", "w2", "b2"])
        hidden = _int(fj.get("hidden"), f"{path}.ffn.hidden")
        ffn = FeedForward(d, hidden, True, dtype)
        ffn.w1 = _parameter(_read_matrix(fj.get("w1"), hidden, d, f"{path}.ffn.w1", dtype))
        ffn.w2 = _parameter(_read_matrix(fj.get("w2"), d, hidden, f"{path}.ffn.w2", dtype))
        ffn.b1 = _parameter(_read_vector(fj["b1"], hidden, f"{path}.ffn.b1", dtype)) \
            if "b1" in fj else None
        ffn.b2 = _parameter(_read_vector(fj["b2"], d, f"{path}.ffn.b2", dtype)) \
            if "b2" in fj else None
    norms = [_read_norm(value[k], d, f"{path}.{k}", dtype) if value.get(k) is not None else None
             for k in ("attention_norm", "ffn_norm")]
    return Layer(heads, attention_bias, ffn, norms[0], norms[1])


def _read_head(value, d: int, path: str, dtype) -> AttentionHead:
    value = _check_fields(value, path, ["name", "head_dim", "value_dim", "query", "query_bias",
                                        "key", "key_bias", "value", "value_bias", "output",
                                        "scale", "rope", "formats"])
    if value.get("formats") is not None:
        raise ValueError(f"{path}.formats: mixed-format heads are not computed by the twin")
    hd = _int(value.get("head_dim"), f"{path}.head_dim")
    vd = _int(value.get("value_dim"), f"{path}.value_dim")
    if hd < 1:
        raise ValueError(f"{path}.head_dim: must be at least 1")
    scale = None
    if value.get("scale") is not None:
        scale = _round_to(_spec_value(value["scale"], f"{path}.scale"), dtype)
    try:
        head = AttentionHead(d, hd, vd, value.get("rope"), False, scale,
                             str(value.get("name", "")), dtype)
    except ValueError as e:
        raise ValueError(f"{path}.rope: {e}") from None
    with torch.no_grad():
        for name, rows in (("query", hd), ("key", hd), ("value", vd)):
            if name in value:
                getattr(head, name).copy_(_read_matrix(value[name], rows, d, f"{path}.{name}",
                                                       dtype))
        if "output" not in value:
            raise ValueError(f"{path}.output: missing")
        head.output.copy_(_read_matrix(value["output"], d, vd, f"{path}.output", dtype))
    for name, n in (("query_bias", hd), ("key_bias", hd), ("value_bias", vd)):
        if name in value:
            setattr(head, name, _parameter(_read_vector(value[name], n, f"{path}.{name}", dtype)))
    return head
