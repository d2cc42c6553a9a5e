// The batched fast path (attention/detail/fast_trig_batch.hpp). Each lane function below is
// the scalar function of fast_trig.cpp named beside it with its branches turned into masks;
// the error arguments are the scalar ones (fast_trig.cpp) and are not repeated. Where a scalar
// step used an integer conversion (floor, nearest integer), the lane uses the 1.5·2^52
// addition, which gives the same double for the arguments in range (|x| < 2^51).
// 32-byte vectors passed between inline functions: GCC notes that their ABI differs with and
// without AVX (-Wpsabi); nothing here crosses a translation unit, so the note is moot.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "attention/detail/fast_trig_batch.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "numeric/trig/eft.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ROPESIM_LANE_AVX2 1
#else
#define ROPESIM_LANE_AVX2 0
#endif

namespace ropesim::attention::detail {

namespace {

using V = double __attribute__((vector_size(32)));
using M = std::int64_t __attribute__((vector_size(32)));  // lane masks: all ones or zero
static_assert(sizeof(V) == kBatchLanes * sizeof(double));
static_assert(kBatch % kBatchLanes == 0);

#define ROPESIM_LANE inline __attribute__((always_inline))

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kSign = std::numeric_limits<std::int64_t>::min();  // 0x8000…
constexpr std::int64_t kExponent = 0x7ff0000000000000;

ROPESIM_LANE V splat(double x) { return V{x, x, x, x}; }
ROPESIM_LANE M splat_mask(std::int64_t x) { return M{x, x, x, x}; }
ROPESIM_LANE V load(const double* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
ROPESIM_LANE void store(double* p, V v) { std::memcpy(p, &v, sizeof v); }
ROPESIM_LANE V vabs(V x) { return (V)((M)x & ~splat_mask(kSign)); }
/// m ? a : b lane by lane (m all ones or zero).
ROPESIM_LANE V select(M m, V a, V b) { return (V)(((M)a & m) | ((M)b & ~m)); }
/// The magnitude of a with the sign of s (a's sign bit clear).
ROPESIM_LANE V with_sign(V a, V s) { return (V)((M)a | ((M)s & splat_mask(kSign))); }
/// Bit equality (−0 ≠ +0).
ROPESIM_LANE M same_bits(V a, V b) { return (M)a == (M)b; }

/// floor(x) for |x| < 2^51: n = RN(RN(x + 1.5·2^52) − 1.5·2^52) is an integer nearest x (exact
/// subtraction in the binade [2^52, 2^53)), minus one where n > x. Equals fast_trig.cpp's
/// floor_small (the same integer, and +0 where that gives +0: n = +0 or 1 − 1).
ROPESIM_LANE V floor_lane(V x) {
  const V n = (x + 0x1.8p52) - 0x1.8p52;
  return n - select(n > x, splat(1.0), splat(0.0));
}

/// nearest_small: trunc(x ± 0.5) (the sign of x; ties away from zero), +0 for |x ± 0.5| < 1.
ROPESIM_LANE V nearest_lane(V x) {
  const V y = x + select(x < 0.0, splat(-0.5), splat(0.5));
  const V f = floor_lane(vabs(y));
  return select(y < 0.0, 0.0 - f, f);
}

struct Lanes {
  V c, ce, s, se;  // cos, its bound, sin, its bound
  M ok;
};

/// cos_sin_turns, lane by lane; ok = false where the scalar function returns false.
ROPESIM_LANE Lanes cos_sin_turns_lane(V fh, V fl, V ef, const numeric::trig::TrigConstants& k,
                                      const numeric::trig::FastPathFault& fault) {
  const V q = nearest_lane(4.0 * fh);
  const numeric::trig::SumOf<V> g = numeric::trig::two_sum(fh - 0.25 * q, fl);
  const M ok = (g.hi == 0.0) | (vabs(g.hi) >= 0x1p-900);
  const V p = g.hi * k.two_pi_hi;
  const V e = numeric::trig::two_prod_error(g.hi, splat(k.two_pi_hi), p);
  const V t = g.hi * k.two_pi_lo + g.lo * k.two_pi_hi;
  const numeric::trig::SumOf<V> y = numeric::trig::fast_two_sum(p, e + t);
  const V ey = 0x1p-102 + 6.3 * ef;
  const V z = y.hi * y.hi;
  V ts = splat(k.s[8]);
  for (int j = 7; j >= 1; --j) ts = ts * z + k.s[j];
  ts = ts * z;
  V tc = splat(k.c[9]);
  for (int j = 8; j >= 1; --j) tc = tc * z + k.c[j];
  tc = tc * z;
  const V S = y.hi + y.hi * ts;
  const V C = 1.0 + tc;
  const V sn = S + y.lo * C;
  const V cs = C - y.lo * S;
  const V common = (0x1p-100 + ey) * (1 + 0x1p-40);
  const V es = 0x1.8p-50 * vabs(sn) + common;
  const V ec = 0x1p-49 + common;
  // quadrant q mod 4 (q ∈ [−8, 8]: the products and the floor are exact): 1 and 3 swap cos
  // and sin, 1 and 2 negate cos, 2 and 3 negate sin (the scalar switch)
  const V qm = q - 4.0 * floor_lane(q * 0.25);
  const M q1 = qm == 1.0, q2 = qm == 2.0, q3 = qm == 3.0;
  const M swap = q1 | q3;
  Lanes r;
  r.c = select(swap, sn, cs);
  r.ce = select(swap, es, ec);
  r.s = select(swap, cs, sn);
  r.se = select(swap, ec, es);
  r.c = select(q1 | q2, -r.c, r.c);
  r.s = select(q2 | q3, -r.s, r.s);
  r.ok = ok;
  if (fault.perturbation != 0) {
    r.c *= 1 + fault.perturbation;
    r.s *= 1 + fault.perturbation;
    if (fault.cover) {
      r.ce += 2 * vabs(r.c * fault.perturbation);
      r.se += 2 * vabs(r.s * fault.perturbation);
    }
  }
  return r;
}

struct Turns {
  V fh, fl, ef;
  M ok;
};

/// turns_of_product for positions I < 2^53 (τ valid: the caller checks both).
ROPESIM_LANE Turns turns_of_product_lane(const numeric::trig::Turn& tau, V I) {
  Turns r;
  const V p = I * tau.hi;
  r.ok = vabs(p) < 0x1p50;
  const V e = numeric::trig::two_prod_error(I, splat(tau.hi), p);
  const V ph = p - floor_lane(p);
  const V itl = I * tau.lo;
  const V lo = e + itl;
  const numeric::trig::SumOf<V> f = numeric::trig::two_sum(ph, lo);
  r.fh = f.hi;
  r.fl = f.lo;
  r.ef = (I * tau.err + (vabs(itl) + vabs(lo)) * 0x1p-52) * (1 + 0x1p-50);
  return r;
}

/// turns_of_ratio for 0 < r < m < 2^53 (the caller checks).
ROPESIM_LANE Turns turns_of_ratio_lane(V R, double m) {
  Turns r;
  const V Mv = splat(m);
  r.fh = R / Mv;
  const V e = R - r.fh * Mv - numeric::trig::two_prod_error(r.fh, Mv, r.fh * Mv);
  r.fl = e / Mv;
  r.ef = vabs(r.fl) * 0x1p-52;
  r.ok = splat_mask(-1);
  return r;
}

/// turns_of_radians.
ROPESIM_LANE Turns turns_of_radians_lane(V x, const numeric::trig::TrigConstants& k) {
  Turns r;
  const V ax = vabs(x);
  r.ok = (ax < 0x1p50) & ((x == 0.0) | (ax >= 0x1p-800));
  const V p = x * k.inv_hi;
  const V e = numeric::trig::two_prod_error(x, splat(k.inv_hi), p);
  const V ph = p - floor_lane(p);
  const V xc1 = x * k.inv_mid;
  const V lo = e + (xc1 + x * k.inv_lo);
  const numeric::trig::SumOf<V> f = numeric::trig::two_sum(ph, lo);
  r.fh = f.hi;
  r.fl = f.lo;
  r.ef = (ax * 0x1p-158 + (2 * vabs(xc1) + vabs(lo)) * 0x1p-52) * (1 + 0x1p-50);
  return r;
}

/// BatchRounding::round, lane by lane.
ROPESIM_LANE V round_lane(const BatchRounding& f, V x) {
  if (f.identity) return x;
  V s = (V)((M)x & splat_mask(kExponent));  // 2^e; 0 for ±0 and subnormals; inf for inf, NaN
  s = select(s < f.min_binade, splat(f.min_binade), s);
  s = select(s > f.max_binade, splat(f.max_binade), s);
  const V m = s * f.magic;
  const V r = vabs((x + m) - m);
  return with_sign(select(r > f.max_finite, splat(kInf), r), x);
}

/// round_decided, lane by lane: out = round_F(v) where decided, the mask of decided lanes.
ROPESIM_LANE M round_decided_lane(const BatchRounding& f, V v, V err, V& out) {
  const M ok = (err < kInf) & (vabs(v) < kInf);
  V lo = v - err, hi = v + err;
  lo = lo - (vabs(lo) * 0x1p-51 + 0x1p-1074);
  hi = hi + (vabs(hi) * 0x1p-51 + 0x1p-1074);
  const V rl = round_lane(f, lo), rh = round_lane(f, hi);
  out = rl;
  return ok & same_bits(rl, rh) & (vabs(rl) < kInf);
}

ROPESIM_LANE void store_mask(std::uint8_t* decided, M ok) {
  for (std::size_t l = 0; l < kBatchLanes; ++l) decided[l] = ok[l] != 0 ? 1 : 0;
}

ROPESIM_LANE void r1_body(const R1Kernel& k, const double* x, std::size_t n, double* cos,
                          double* sin, std::uint8_t* decided) {
  const numeric::trig::TrigConstants& c = numeric::trig::trig_constants();
  const numeric::trig::FastPathFault fault = numeric::trig::fast_path_fault();
  for (std::size_t j = 0; j < n; j += kBatchLanes) {
    const V xv = load(x + j);
    const Turns t = k.ratio ? turns_of_ratio_lane(xv, k.m) : turns_of_product_lane(k.tau, xv);
    const Lanes a = cos_sin_turns_lane(t.fh, t.fl, t.ef, c, fault);
    M ok = t.ok & a.ok;
    for (std::size_t target = 0; target < k.targets.size(); ++target) {
      V co, si;
      ok &= round_decided_lane(k.targets[target], a.c, a.ce, co);
      ok &= round_decided_lane(k.targets[target], a.s, a.se, si);
      store(cos + target * kBatch + j, co);
      store(sin + target * kBatch + j, si);
    }
    store_mask(decided + j, ok);
  }
}

ROPESIM_LANE void pipeline_body(const PipelineKernel& k, const double* t, std::size_t n,
                                double* cos, double* sin, std::uint8_t* decided, double* angle) {
  const numeric::trig::TrigConstants& c = numeric::trig::trig_constants();
  const numeric::trig::FastPathFault fault = numeric::trig::fast_path_fault();
  for (std::size_t j = 0; j < n; j += kBatchLanes) {
    const V tv = round_lane(k.pos_store, round_lane(k.pos, load(t + j)));
    const V x = round_lane(k.x_round, tv);
    V a;
    switch (k.recipe) {
      case PipelineKernel::Recipe::product:
        a = round_lane(k.ang, k.factor * x);
        break;
      case PipelineKernel::Recipe::quotient:
        a = round_lane(k.ang, x / k.factor);
        break;
      default:
        a = x;
        for (std::size_t s = 0; s < k.chain; ++s) a = round_lane(k.ang, a * k.factor);
        break;
    }
    a = round_lane(k.ang_store, a);
    if (angle != nullptr) store(angle + j, a);
    a = round_lane(k.cs_arg, a);
    M ok = vabs(a) < kInf;
    // a = 0: cos 1, sin a (±0) without the turns (the scalar branch); elsewhere the turns
    const Turns tr = turns_of_radians_lane(a, c);
    const Lanes l = cos_sin_turns_lane(tr.fh, tr.fl, tr.ef, c, fault);
    V co, si;
    M trig = tr.ok & l.ok;
    trig &= round_decided_lane(k.cs, l.c, l.ce, co);
    trig &= round_decided_lane(k.cs, l.s, l.se, si);
    const M zero = a == 0.0;
    ok &= zero | trig;
    co = select(zero, splat(1.0), co);
    si = select(zero, a, si);
    co = round_lane(k.cs_store, co);
    si = round_lane(k.cs_store, si);
    if (k.scale) {
      co = round_lane(k.scaling_store,
                      round_lane(k.scaling, round_lane(k.scaling, co) * k.scale_value));
      si = round_lane(k.scaling_store,
                      round_lane(k.scaling, round_lane(k.scaling, si) * k.scale_value));
    }
    for (std::size_t target = 0; target < k.tables.size(); ++target) {
      const V tc = round_lane(k.tables[target], co), tsn = round_lane(k.tables[target], si);
      ok &= (vabs(tc) < kInf) & (vabs(tsn) < kInf);
      store(cos + target * kBatch + j, tc);
      store(sin + target * kBatch + j, tsn);
    }
    store_mask(decided + j, ok);
  }
}

#if ROPESIM_LANE_AVX2
// The same bodies compiled for AVX2 (4 lanes per instruction instead of 2); AVX2 implies no
// FMA here (that is the "fma" target), and -ffp-contract=off forbids contraction anyway.
__attribute__((target("avx2"))) void r1_avx2(const R1Kernel& k, const double* x, std::size_t n,
                                             double* cos, double* sin, std::uint8_t* decided) {
  r1_body(k, x, n, cos, sin, decided);
}
__attribute__((target("avx2"))) void pipeline_avx2(const PipelineKernel& k, const double* t,
                                                   std::size_t n, double* cos, double* sin,
                                                   std::uint8_t* decided, double* angle) {
  pipeline_body(k, t, n, cos, sin, decided, angle);
}
#endif
void r1_baseline(const R1Kernel& k, const double* x, std::size_t n, double* cos, double* sin,
                 std::uint8_t* decided) {
  r1_body(k, x, n, cos, sin, decided);
}
void pipeline_baseline(const PipelineKernel& k, const double* t, std::size_t n, double* cos,
                       double* sin, std::uint8_t* decided, double* angle) {
  pipeline_body(k, t, n, cos, sin, decided, angle);
}

BatchIsa& current_isa() {
  static BatchIsa isa = batch_avx2_available() ? BatchIsa::avx2 : BatchIsa::baseline;
  return isa;
}

}  // namespace

std::optional<BatchRounding> BatchRounding::of(const FormatOps* ops) {
  BatchRounding r;
  if (ops == nullptr || ops->is_binary64()) return r;
  if (!ops->fast_round()) return std::nullopt;
  const Format& f = ops->format();
  if (f.precision > 51 || f.emin < -1022 || f.emax > 969 + f.precision) return std::nullopt;
  r.identity = false;
  r.min_binade = std::ldexp(1.0, f.emin);
  r.max_binade = std::ldexp(1.0, f.emax + 1);
  r.magic = std::ldexp(1.5, 53 - f.precision);
  r.max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  return r;
}

double BatchRounding::round(double x) const { return round_lane(*this, splat(x))[0]; }

bool batch_avx2_available() {
#if ROPESIM_LANE_AVX2
  static const bool available = __builtin_cpu_supports("avx2") != 0;
  return available;
#else
  return false;
#endif
}

BatchIsa batch_isa() { return current_isa(); }

BatchIsa set_batch_isa(BatchIsa isa) {
  const BatchIsa before = current_isa();
  current_isa() = isa == BatchIsa::avx2 && !batch_avx2_available() ? BatchIsa::baseline : isa;
  return before;
}

void r1_batch(const R1Kernel& k, const double* x, std::size_t n, double* cos, double* sin,
              std::uint8_t* decided) {
#if ROPESIM_LANE_AVX2
  if (current_isa() == BatchIsa::avx2) return r1_avx2(k, x, n, cos, sin, decided);
#endif
  r1_baseline(k, x, n, cos, sin, decided);
}

void pipeline_batch(const PipelineKernel& k, const double* t, std::size_t n, double* cos,
                    double* sin, std::uint8_t* decided, double* angle) {
#if ROPESIM_LANE_AVX2
  if (current_isa() == BatchIsa::avx2) return pipeline_avx2(k, t, n, cos, sin, decided, angle);
#endif
  pipeline_baseline(k, t, n, cos, sin, decided, angle);
}

}  // namespace ropesim::attention::detail
