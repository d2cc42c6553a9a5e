// The candidate algorithm's domain and its error bound E (proofs/range/fast_range.hpp, THEORY §6):
// a forward error analysis in exact rationals of every rounding of a realised score.
#include <mpfr.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fast_range_detail.hpp"

namespace ropesim::proofs {

using numeric::Format;

namespace {

mpq_class pow2(long e) {
  mpz_class p = 1;
  mpz_mul_2exp(p.get_mpz_t(), p.get_mpz_t(), static_cast<unsigned long>(e < 0 ? -e : e));
  return e >= 0 ? mpq_class(p) : mpq_class(mpz_class(1), p);
}

/// The error model of one rounding into a floating format: |round(x) − x| ≤ ε|x| + η for
/// every real x with |x| ≤ max (max = the largest finite value: no overflow, no saturation).
/// Normal range: |x| ∈ [2^e, 2^(e+1)) has spacing 2^(e−p+1) ≤ 2^(1−p)|x|; a nearest rounding
/// errs by at most half of it (ε = 2^-p), a directed one by less than all of it (ε = 2^(1−p)).
/// Below 2^emin: the subnormal spacing 2^(emin−p+1) (half of it for nearest), or without
/// subnormals the gap to 2^emin (η = 2^emin covers every mode).
struct RoundingModel {
  mpq_class eps, eta, max;
};

std::optional<RoundingModel> rounding_model(const Format& f, numeric::Rounding r) {
  if (f.is_fixed_point()) return std::nullopt;
  const bool nearest = r == numeric::Rounding::nearest_even || r == numeric::Rounding::nearest_away;
  const long p = f.precision;
  RoundingModel m;
  m.eps = nearest ? pow2(-p) : pow2(1 - p);
  if (f.subnormals) {
    m.eta = nearest ? pow2(f.emin - p) : pow2(f.emin - p + 1);
  } else {
    m.eta = pow2(f.emin);
  }
  m.max = exact_rational(numeric::max_finite(f));
  return m;
}

/// A computed quantity x̂ against its ideal real x*: |x*| ≤ M and |x̂ − x*| ≤ D.
struct Err {
  mpq_class M, D;
};

/// An upper bound of q ≥ 0 of bounded size: q itself while its numerator and denominator
/// together hold at most 1024 bits, else q rounded upward to a 256-bit dyadic (MPFR, RNDU).
/// D_{t+1} = D_t + ε(M_t + D_t) + η multiplies D by (1 + ε) at every rounding, so along a
/// sequential sum of 2B terms its exact rational grows by about p bits per term and the
/// analysis of a wide head (B = 2^15 blocks) would take minutes; every bound in the
/// propagation is monotone in D, so replacing D by a larger value keeps the bound sound and
/// moves E by at most 2^-255 relative (small heads keep their exact E).
mpq_class bounded_up(mpq_class q) {
  const std::size_t bits =
      mpz_sizeinbase(q.get_num_mpz_t(), 2) + mpz_sizeinbase(q.get_den_mpz_t(), 2);
  if (bits <= 1024) return q;
  mpfr_t x;
  mpfr_init2(x, 256);
  mpfr_set_q(x, q.get_mpq_t(), MPFR_RNDU);
  mpz_class m;
  const long e = mpfr_get_z_2exp(m.get_mpz_t(), x);
  mpfr_clear(x);
  return mpq_class(m) * pow2(e);
}

/// Forward error propagation in exact rationals; `overflow` is set when some rounded
/// argument could exceed the format's largest finite value (the model would not hold).
struct Propagation {
  bool overflow = false;
  Err round(const Err& x, const RoundingModel& r) {
    const mpq_class mag = x.M + x.D;  // |x̂| ≤ M + D
    if (mag >= r.max) overflow = true;
    return {x.M, bounded_up(x.D + r.eps * mag + r.eta)};
  }
  static Err mul(const Err& x, const Err& y) {
    return {x.M * y.M, x.M * y.D + y.M * x.D + x.D * y.D};
  }
  static Err add(const Err& x, const Err& y) { return {x.M + y.M, x.D + y.D}; }
};

}  // namespace

namespace detail {

std::optional<std::string> structural_refusal(const FixedOffsetHead& head) {
  using Kind = attention::Realisation::Kind;
  const Format& F = head.policy.format;
  if (head.realisation.kind == Kind::r2)
    return "realisation r2 forms its angle in F, so its error grows with the position and no "
           "position-independent bound E exists (the candidate algorithm covers r1, r3 and "
           "pipelines whose table, rotation and output are the activation format)";
  if (head.realisation.kind == Kind::pipeline) {
    // measured key deviations (THEORY §6 "Pipelines"): the rotation's intermediates must live
    // in F for the overflow analysis (error_analysis with the table bound of table_bound)
    const auto& st = head.realisation.steps;
    if (!(st.table == F) || !(st.rotation.compute == F) || !(st.rotation.stored() == F) ||
        !(st.output == F) ||
        st.rotation.rounding.value_or(head.policy.rounding) != head.policy.rounding)
      return "pipeline " + head.realisation.name() +
             " keeps its table, rotation or output outside the activation format " + F.name +
             " (the candidate algorithm covers pipelines with table = rotation = output = A)";
  }
  if (!(head.realisation.format == head.policy.format))
    return "the realisation's format differs from the policy's";
  if (F.is_fixed_point() || !F.fits_double())
    return "format " + F.name + " is not a floating format inside binary64";
  if (head.policy.summation == attention::Summation::wide_accumulator &&
      head.policy.accumulator.is_fixed_point())
    return "accumulator " + head.policy.accumulator.name + " is fixed point";
  if (head.head.scale) return "the head scales its scores";
  if (head.head.head_dim != head.schedule.dimension() ||
      head.ideal.blocks.size() != head.schedule.blocks.size())
    return "the head's dimension does not match its schedule";
  if (!numeric::f_large(F, head.policy.rounding)) return "f_large is undefined";
  return std::nullopt;
}

bool measured_keys(const FixedOffsetHead& head) {
  return head.realisation.kind == attention::Realisation::Kind::pipeline;
}

mpq_class table_bound(const FixedOffsetHead& head) {
  if (!measured_keys(head)) return 1;
  // cos and sin in fp32 (≤ 1, correctly rounded or by a library within a few ulps of a value
  // ≤ 1), times the schedule's attention factor s in fp32 (each rounding ≤ 2^-24 relative):
  // |entry| ≤ max(1, |s|)·(1 + 2^-16) with room to spare; certified_range_fast checks every
  // realised key against it
  mpq_class T = 1;
  if (head.schedule.attention_scaling)
    T = std::max(T, mpq_class(abs(*head.schedule.attention_scaling)));
  return T * mpq_class(65537, 65536);
}

std::pair<std::size_t, std::size_t> block_coordinates(const FixedOffsetHead& head, std::size_t d) {
  const std::size_t B = head.ideal.blocks.size();
  if (head.realisation.layout == attention::PairLayout::adjacent) return {2 * d, 2 * d + 1};
  return {d, d + B};
}

}  // namespace detail

namespace {

/// The bound and whether an intermediate could overflow (structural domain assumed).
/// The score is Σ_c q_c·k_c over the head's D coordinates; a coordinate outside the rotary
/// blocks (an unrotated pair) holds 0 in both q and k, its product is exactly 0 and so is
/// every addition of 0 (x + 0 = x in every rounding mode), so only the 2B block products
/// are rounded; the summation order (sequential left to right, pairwise's tree over all D
/// terms, the accumulator's sequential sums) is followed exactly, zeros included.
std::pair<mpq_class, bool> error_analysis(const FixedOffsetHead& head) {
  const auto& policy = head.policy;
  const RoundingModel F = *rounding_model(policy.format, policy.rounding);
  const bool wide = policy.summation == attention::Summation::wide_accumulator;
  const RoundingModel A = wide ? *rounding_model(policy.accumulator, policy.rounding) : F;
  Propagation P;
  // matvec(Q = 0, x = 0, b): zero products (exactly 0 in every mode) plus the bias, an
  // element of F, summed under the policy: exact (0 + b = b) for sequential, pairwise and
  // exact sums; under the wide accumulator b is converted into A, summed there and stored
  // into F (each step taken as a rounding: A need not contain F).
  auto bias_path = [&](const Err& b) {
    if (!wide) return b;
    return P.round(P.round(P.round(b, A), A), F);
  };
  // r1 / r3: cos and sin of the exact angle (r3: of 2π·a·(i mod m)/m, the same real)
  // correctly rounded into F; pipelines: a table entry of magnitude ≤ table_bound (its fp32
  // value) rounded into F (for the overflow check only: E itself is not used for pipelines)
  const mpq_class T = detail::table_bound(head);
  const Err c = P.round({T, 0}, F), s = P.round({T, 0}, F);
  // THEORY §2.1: (rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1))) in F
  auto rotate = [&](const Err& x0, const Err& x1) {
    const Err y0 = P.round(
        Propagation::add(P.round(Propagation::mul(c, x0), F), P.round(Propagation::mul(s, x1), F)),
        F);
    const Err y1 = P.round(
        Propagation::add(P.round(Propagation::mul(s, x0), F), P.round(Propagation::mul(c, x1), F)),
        F);
    return std::make_pair(y0, y1);
  };
  // the D products q_c·k_c (zero outside the rotary blocks), as computed under the policy:
  // rounded into F (sequential, pairwise), into A from operands converted into A (wide), or
  // exact (exact summation)
  const std::size_t D = head.head.head_dim;
  std::vector<Err> terms(D, Err{0, 0});
  std::vector<bool> zero(D, true);
  for (std::size_t d = 0; d < head.ideal.blocks.size(); ++d) {
    const mpq_class Cw = head.C_exact * abs(head.ideal.weights[d]);
    // query bias: round_F(C·w·cos kθ), round_F(−C·w·sin kθ) from the exact reals
    const Err a0 = bias_path(P.round({Cw, 0}, F)), a1 = bias_path(P.round({Cw, 0}, F));
    const auto [q0, q1] = rotate(a0, a1);
    // the key bias (1, 0) passes the matvec exactly (1 is in every floating A and F) and its
    // rotation is (rnd(ĉ·1 − rnd(ŝ·0)), rnd(rnd(ŝ·1) + rnd(ĉ·0))) = (ĉ, ŝ) exactly
    const Err kk0 = c, kk1 = s;
    const auto [c0, c1] = detail::block_coordinates(head, d);
    switch (policy.summation) {
      case attention::Summation::sequential:
      case attention::Summation::pairwise:
        terms[c0] = P.round(Propagation::mul(q0, kk0), F);
        terms[c1] = P.round(Propagation::mul(q1, kk1), F);
        break;
      case attention::Summation::wide_accumulator:
        terms[c0] = P.round(Propagation::mul(P.round(q0, A), P.round(kk0, A)), A);
        terms[c1] = P.round(Propagation::mul(P.round(q1, A), P.round(kk1, A)), A);
        break;
      case attention::Summation::exact:
        terms[c0] = Propagation::mul(q0, kk0);
        terms[c1] = Propagation::mul(q1, kk1);
        break;
    }
    zero[c0] = zero[c1] = false;
  }
  // one addition: exact when a side is the exact 0 of a zero coordinate (or a sum of them)
  struct Partial {
    Err e;
    bool zero;
  };
  auto add = [&](const Partial& x, const Partial& y, const RoundingModel& into) -> Partial {
    if (x.zero) return y;
    if (y.zero) return x;
    return {P.round(Propagation::add(x.e, y.e), into), false};
  };
  auto sequential = [&](const RoundingModel& into) {
    Partial acc{{0, 0}, true};
    for (std::size_t t = 0; t < D; ++t) acc = add(acc, {terms[t], zero[t]}, into);
    return acc;
  };
  // sum(t[lo..hi)) = sum(t[lo..lo+⌊n/2⌋)) + sum(t[lo+⌊n/2⌋..hi)) (numeric/summation.hpp)
  auto pairwise = [&](auto&& self, std::size_t lo, std::size_t hi) -> Partial {
    if (hi - lo == 1) return {terms[lo], zero[lo]};
    const std::size_t mid = lo + (hi - lo) / 2;
    return add(self(self, lo, mid), self(self, mid, hi), F);
  };
  Partial score;
  switch (policy.summation) {
    case attention::Summation::sequential:
      score = sequential(F);
      break;
    case attention::Summation::pairwise:
      score = pairwise(pairwise, 0, D);
      break;
    case attention::Summation::wide_accumulator:
      score = sequential(A);
      score.e = P.round(score.e, F);
      break;
    case attention::Summation::exact: {
      Err total{0, 0};
      for (std::size_t t = 0; t < D; ++t) total = Propagation::add(total, terms[t]);
      score = {P.round(total, F), false};
      break;
    }
  }
  return {score.e.D, P.overflow};
}

}  // namespace

namespace detail {

namespace {

/// q rounded up to a double (an upper bound of q ≥ 0).
double up(const mpq_class& q) {
  double d = numeric::nearest_double(q);
  if (mpq_class(d) < q) d = std::nextafter(d, HUGE_VAL);
  return d;
}

}  // namespace

QueryBound::QueryBound(const FixedOffsetHead& head, const std::optional<mpq_class>& E)
    : head_(head), ideal_(head.ideal) {
  E_ = E ? up(*E) : HUGE_VAL;
  measured_ = measured_keys(head);
  const auto& policy = head.policy;
  const auto F = rounding_model(policy.format, policy.rounding);
  const bool wide = policy.summation == attention::Summation::wide_accumulator;
  const auto A = wide ? rounding_model(policy.accumulator, policy.rounding) : F;
  use_model_ = F.has_value() && A.has_value();
  if (!use_model_) return;
  eps_F_ = up(F->eps);
  eta_F_ = up(F->eta);
  eps_A_ = up(A->eps);
  eta_A_ = up(A->eta);
  // K ≥ ||(ĉ − c, ŝ − s)||₂ ≤ ||ε·(|c|, |s|)||₂ + ||(η, η)||₂ = ε + √2·η (Minkowski, c² + s² = 1)
  K_ = std::nextafter(eps_F_ + std::nextafter(std::sqrt(2.0), HUGE_VAL) * eta_F_, HUGE_VAL);
  const double C = head.C.to_double();  // exact: F fits a double
  for (std::size_t d = 0; d < ideal_.w.size(); ++d) {
    coords_.push_back(block_coordinates(head, d));
    Cw_.push_back(C * ideal_.w[d]);
    slope_max_ = std::max(slope_max_, ideal_.e[d] + 0x1p-53 * std::fabs(ideal_.theta[d]));
  }
  if (policy.summation == attention::Summation::sequential ||
      policy.summation == attention::Summation::pairwise)
    init_split();
}

void QueryBound::init_split() {
  // The summation's additions as a tree over the head's coordinates (THEORY §6 "Split
  // bounds"): sequential left to right, or pairwise's halves (numeric/summation.hpp). A
  // coordinate outside the rotary blocks is 0 in q̂ and k̂: its product and every addition
  // with it are exact, so such an addition is no node (the other side passes through).
  const std::size_t D = head_.head.head_dim, B = coords_.size();
  if (D >= (std::size_t{1} << 30)) return;
  block_.assign(D, static_cast<std::uint32_t>(B));
  std::vector<std::size_t> partner(D, D);
  for (std::size_t d = 0; d < B; ++d) {
    const auto [c0, c1] = coords_[d];
    block_[c0] = block_[c1] = static_cast<std::uint32_t>(d);
    partner[c0] = c1;
    partner[c1] = c0;
  }
  constexpr std::uint32_t none = ~std::uint32_t{0};
  auto half = [&](std::size_t c) { return 0.5 * std::fabs(Cw_[block_[c]]); };
  // H_v = Σ_{c∈v} |C·w_d|/2 and β̄_v = Σ_{c∈v, partner ∉ v} |C·w_d|/2 of each node
  std::vector<double> H, beta;
  std::vector<std::pair<std::size_t, std::size_t>> range;  // [lo, hi) of each node
  auto node = [&](std::uint32_t l, std::uint32_t r, std::size_t lo, std::size_t hi) {
    nodes_.push_back({l, r, 0});
    range.emplace_back(lo, hi);
    return static_cast<std::uint32_t>(D + nodes_.size() - 1);
  };
  std::uint32_t root = none;
  if (head_.policy.summation == attention::Summation::sequential) {
    double h = 0, b = 0;
    std::size_t first = D;
    for (std::size_t c = 0; c < D; ++c) {
      if (block_[c] == B) continue;
      h += half(c);
      // the partner already in the prefix pairs up with c (their β terms cancel)
      b += partner[c] < c ? -half(c) : half(c);
      if (root == none) {
        root = static_cast<std::uint32_t>(c);
        first = c;
        continue;
      }
      root = node(root, static_cast<std::uint32_t>(c), first, c + 1);
      H.push_back(h);
      beta.push_back(std::max(0.0, b));
    }
  } else {
    auto build = [&](auto&& self, std::size_t lo, std::size_t hi) -> std::uint32_t {
      if (hi - lo == 1) return block_[lo] == B ? none : static_cast<std::uint32_t>(lo);
      const std::size_t mid = lo + (hi - lo) / 2;
      const std::uint32_t l = self(self, lo, mid), r = self(self, mid, hi);
      if (l == none) return r;
      if (r == none) return l;
      const std::uint32_t v = node(l, r, lo, hi);
      double h = 0, b = 0;
      for (std::size_t c = lo; c < hi; ++c) {
        if (block_[c] == B) continue;
        h += half(c);
        if (partner[c] < lo || partner[c] >= hi) b += half(c);
      }
      H.push_back(h);
      beta.push_back(b);
      return v;
    };
    root = build(build, 0, D);
  }
  if (root == none) return;  // no rotary coordinate
  // h(v): rounded additions above v; the root's is 0, the nodes are in post-order
  std::vector<std::size_t> depth(D + nodes_.size(), 0);
  for (std::size_t v = nodes_.size(); v-- > 0;) {
    depth[nodes_[v].left] = depth[nodes_[v].right] = depth[D + v] + 1;
  }
  std::vector<double> g(D + nodes_.size() + 1, 1.0);  // (1 + ε)^h, rounded up
  for (std::size_t h = 1; h < g.size(); ++h)
    g[h] = std::nextafter(g[h - 1] * (1 + eps_F_), HUGE_VAL);
  leaf_g_.assign(D, 0.0);
  double fixed = 0, GH = 0;
  for (std::size_t c = 0; c < D; ++c) {
    if (block_[c] == B) continue;
    leaf_g_[c] = g[depth[c]];
    fixed += leaf_g_[c] * eta_F_;
  }
  for (std::size_t v = 0; v < nodes_.size(); ++v) {
    nodes_[v].g = g[depth[D + v]];
    fixed += nodes_[v].g * (eta_F_ + eps_F_ * beta[v]);
    GH += nodes_[v].g * H[v];
  }
  fixed_ = fixed;
  GH_ = GH;
  split_ = true;
}

void QueryBound::deviation(std::uint64_t i, const double* q, double& a, double& qn,
                           std::vector<double>* dev, const double* keys) const {
  constexpr double u = 0x1p-53;
  const double m = static_cast<double>(i - head_.k);  // exact: < 2^53
  // Σ_d ||q̂_d − q_d||₂ and Σ_d ||q̂_d||₂. q̃_d = (C·w_d)⊗(cos, sin)(m⊗θ̂_d) errs from q_d by
  // ≤ γ_d/2 = |C·w_d|·(2^-50 + m·(e_d + u·|θ̂_d|) + 3u) per coordinate (argument, libm ≤
  // 2^-50, C·w_d's and the product's roundings, each ≤ u relative), and
  // ||δ_d|| ≤ ||q̂_d − q̃_d|| + √2·γ_d/2 with the computed norm's own error (≤ 4u relative)
  // inside the factor 1 + 2^-50; per coordinate |q̂_c − q_c| ≤ |q̂_c ⊖ q̃_c|·(1 + 2^-50) + γ_d/2.
  a = 0;
  qn = 0;
  for (std::size_t d = 0; d < Cw_.size(); ++d) {
    const auto [c0, c1] = coords_[d];
    const double ang = m * ideal_.theta[d];
    const double x0 = q[c0] - Cw_[d] * std::cos(ang), x1 = q[c1] - Cw_[d] * std::sin(ang);
    const double gamma = 2 * std::fabs(Cw_[d]) *
                         (0x1p-50 + m * (ideal_.e[d] + u * std::fabs(ideal_.theta[d])) + 3 * u);
    a += std::sqrt(x0 * x0 + x1 * x1) * (1 + 0x1p-50) + 0.75 * gamma;
    // the key term: K_d·||q̂_d||₂ (K_d measured, or K = ε + √2·η)
    qn += (keys ? keys[d] : K_) * (std::sqrt(q[c0] * q[c0] + q[c1] * q[c1]) * (1 + 0x1p-50));
    if (dev) {
      (*dev)[c0] = std::fabs(x0) * (1 + 0x1p-50) + 0.5 * gamma;
      (*dev)[c1] = std::fabs(x1) * (1 + 0x1p-50) + 0.5 * gamma;
    }
  }
}

const double* QueryBound::keys_or_throw(const double* keys) const {
  if (measured_ && !keys)
    throw std::logic_error("QueryBound: a pipeline's bound needs its measured key deviations");
  return measured_ ? keys : nullptr;
}

double QueryBound::split_error(std::uint64_t i, const double* q, const double* keys) const {
  keys = keys_or_throw(keys);
  std::vector<double> val(head_.head.head_dim + nodes_.size(), 0.0);
  double a = 0, kq = 0;
  deviation(i, q, a, kq, &val, keys);
  return split_from(q, a, kq, val, keys);
}

std::pair<double, double> QueryBound::error_and_split(std::uint64_t i, const double* q, bool split,
                                                      const double* keys) const {
  if (!use_model_) return {E_, HUGE_VAL};
  keys = keys_or_throw(keys);
  split = split && split_;
  thread_local std::vector<double> val;
  if (split) val.assign(head_.head.head_dim + nodes_.size(), 0.0);
  double a = 0, kq = 0;
  deviation(i, q, a, kq, split ? &val : nullptr, keys);
  return {error_from(q, a, kq, keys), split ? split_from(q, a, kq, val, keys) : HUGE_VAL};
}

void QueryBound::key_deviation(std::uint64_t j, const double* k, double* out) const {
  constexpr double u = 0x1p-53;
  const double m = static_cast<double>(j);  // exact: < 2^53
  // as deviation() with C·w_d = 1: cos(m⊗θ̂_d) and sin(m⊗θ̂_d) within 2^-50 + m·(e_d +
  // u·|θ̂_d|) (+3u of slack) of cos jθ_d and sin jθ_d; the difference's and the norm's roundings
  // inside the factor 1 + 2^-50; √2·γ/2 ≤ 0.75·γ (Minkowski); all rounded up by 1 + 2^-40
  double M = 0;
  for (std::size_t d = 0; d < coords_.size(); ++d) {
    const auto [c0, c1] = coords_[d];
    const double ang = m * ideal_.theta[d];
    const double x0 = k[c0] - std::cos(ang), x1 = k[c1] - std::sin(ang);
    const double gamma = 2 * (0x1p-50 + m * (ideal_.e[d] + u * std::fabs(ideal_.theta[d])) + 3 * u);
    out[d] = (std::sqrt(x0 * x0 + x1 * x1) * (1 + 0x1p-50) + 0.75 * gamma) * (1 + 0x1p-40);
    M = std::max(M, std::max(std::fabs(k[c0]), std::fabs(k[c1])));
  }
  out[coords_.size()] = M;
}

std::vector<double> KeyDeviations::segments(std::uint64_t a, std::uint64_t count,
                                            const double* keys, std::size_t D) const {
  std::vector<double> out(width_ * ((count + kSegment - 1) / kSegment), 0.0), dev(width_);
  (void)a;  // segments are aligned at a (a multiple of kSegment, checked by append)
  for (std::uint64_t p = 0; p < count; ++p) {
    bound_.key_deviation(a + p, keys + D * p, dev.data());
    double* seg = &out[width_ * (p / kSegment)];
    for (std::size_t x = 0; x < width_; ++x) seg[x] = std::max(seg[x], dev[x]);
  }
  return out;
}

void KeyDeviations::append(std::uint64_t a, const std::vector<double>& segment_maxima) {
  if (a % kSegment != 0 || prefix_.size() != width_ * (a / kSegment))
    throw std::logic_error("KeyDeviations: segments appended out of order");
  for (const double v : segment_maxima) {
    // the same entry of the previous segment (none for the first)
    prefix_.push_back(prefix_.size() >= width_ ? std::max(v, prefix_[prefix_.size() - width_]) : v);
  }
}

const double* KeyDeviations::for_query(std::uint64_t i) const {
  const std::uint64_t s = (i - 1) / kSegment;  // the segment of key i − 1
  if (i < 1 || width_ * (s + 1) > prefix_.size())
    throw std::logic_error("KeyDeviations: the keys before a query were not measured");
  return &prefix_[width_ * s];
}

double QueryBound::split_from(const double* q, double a, double kq, std::vector<double>& val,
                              const double* keys) const {
  const std::size_t D = head_.head.head_dim, B = coords_.size();
  // leaves: the products' roundings g_c·ε·|q̂_c k̂_c| ≤ g_c·ε·|q̂_c|·M (|k̂_c| ≤ M, M = 1 for r1
  // and r3); Δ at the leaves: |q̂_c − q_c|·M + |C·w_d|·|k̂_c − k_c| (|q_c| ≤ |C·w_d|), with
  // |k̂_c − k_c| ≤ ε + η (r1, r3) or ≤ K_d (measured)
  const double M = keys ? keys[B] : 1.0;
  double leaves = 0;
  for (std::size_t c = 0; c < D; ++c) {
    if (leaf_g_[c] == 0) continue;
    leaves += leaf_g_[c] * (std::fabs(q[c]) * M);
    const double dk = keys ? keys[block_[c]] : eps_F_ + eta_F_;
    val[c] = val[c] * M + std::fabs(Cw_[block_[c]]) * dk;
  }
  // the nodes: Δ_v = Δ_left + Δ_right, weighted by g_v
  double nodes = 0;
  for (std::size_t v = 0; v < nodes_.size(); ++v) {
    const double x = val[nodes_[v].left] + val[nodes_[v].right];
    val[D + v] = x;
    nodes += nodes_[v].g * x;
  }
  // non-negative terms, fewer than 2^22 operations of relative error ≤ 2^-53 each
  return (a + kq + eps_F_ * (leaves + nodes) + fixed_) * (1 + 0x1p-28);
}

double QueryBound::offset_error(std::uint64_t n) const {
  constexpr double u = 0x1p-53;
  const std::size_t D = head_.head.head_dim, B = coords_.size();
  const double nd = static_cast<double>(n);  // exact: n < 2^53
  std::vector<double> val(D + nodes_.size(), 0.0);
  // leaves: α_c(n) = (C·w_d/2)·cos(n·θ_d), computed as (C⊗ŵ_d/2)⊗cos(n⊗θ̂_d): within
  // |C·w_d|/2·(2^-50 + n·(e_d + u·|θ̂_d|) + 5u) of it (libm, argument, ŵ_d, two products)
  for (std::size_t d = 0; d < B; ++d) {
    const double x = 0.5 * Cw_[d] * std::cos(nd * ideal_.theta[d]);
    val[coords_[d].first] = val[coords_[d].second] = x;
  }
  // the nodes: α_v = α_left + α_right, each addition within u of its result, so the
  // computed α̃_v is within H_v·(2^-50 + n·slope + 5u + 2D·u) of α_v (H_v = Σ_{c∈v}|C·w_d|/2)
  double acc = 0;
  for (std::size_t v = 0; v < nodes_.size(); ++v) {
    const double x = val[nodes_[v].left] + val[nodes_[v].right];
    val[D + v] = x;
    acc += nodes_[v].g * std::fabs(x);
  }
  const double slack =
      GH_ * (0x1p-50 + nd * slope_max_ + 5 * u + 2 * static_cast<double>(D) * u) * (1 + 0x1p-40);
  return eps_F_ * (acc + slack) * (1 + 0x1p-28);
}

double QueryBound::error(std::uint64_t i, const double* q, const double* keys) const {
  if (!use_model_) return E_;
  keys = keys_or_throw(keys);
  double a = 0, kq = 0;
  deviation(i, q, a, kq, nullptr, keys);
  return error_from(q, a, kq, keys);
}

double QueryBound::error_from(const double* q, double a, double kq, const double* keys) const {
  // ρ: the rounding of the dot product of q̂ with any k̂ with |k̂_c| ≤ M (1 for r1 and r3,
  // measured for pipelines), in the policy's order (error_analysis with D = 0 for q̂ and k̂,
  // which are exact, and q̂'s own magnitudes)
  const auto& policy = head_.policy;
  const std::size_t D = head_.head.head_dim;
  const double kmax = keys ? keys[coords_.size()] : 1.0;
  struct Part {
    double M = 0, D = 0;
    bool zero = true;
  };
  auto round = [](const Part& x, double eps, double eta) {
    return Part{x.M, x.D + eps * (x.M + x.D) + eta, x.zero};
  };
  std::vector<Part> terms(D);
  for (std::size_t c = 0; c < D; ++c) {
    const double mag = std::fabs(q[c]) * kmax;  // ≥ |q̂_c·k̂_c|
    if (mag == 0) continue;  // 0·k̂ = 0 exactly, and adding an exact 0 is exact
    switch (policy.summation) {
      case attention::Summation::sequential:
      case attention::Summation::pairwise:
        terms[c] = round({mag, 0, false}, eps_F_, eta_F_);
        break;
      case attention::Summation::wide_accumulator: {
        const Part qa = round({std::fabs(q[c]), 0, false}, eps_A_, eta_A_);
        const Part ka = round({kmax, 0, false}, eps_A_, eta_A_);
        const Part prod{mag, qa.M * ka.D + ka.M * qa.D + qa.D * ka.D, false};
        terms[c] = round(prod, eps_A_, eta_A_);
        break;
      }
      case attention::Summation::exact:
        terms[c] = {mag, 0, false};
        break;
    }
  }
  auto add = [&](const Part& x, const Part& y, double eps, double eta) -> Part {
    if (x.zero) return y;
    if (y.zero) return x;
    return round({x.M + y.M, x.D + y.D, false}, eps, eta);
  };
  auto sequential = [&](double eps, double eta) {
    Part acc;
    for (std::size_t t = 0; t < D; ++t) acc = add(acc, terms[t], eps, eta);
    return acc;
  };
  auto pairwise = [&](auto&& self, std::size_t lo, std::size_t hi) -> Part {
    if (hi - lo == 1) return terms[lo];
    const std::size_t mid = lo + (hi - lo) / 2;
    return add(self(self, lo, mid), self(self, mid, hi), eps_F_, eta_F_);
  };
  Part score;
  switch (policy.summation) {
    case attention::Summation::sequential:
      score = sequential(eps_F_, eta_F_);
      break;
    case attention::Summation::pairwise:
      score = pairwise(pairwise, 0, D);
      break;
    case attention::Summation::wide_accumulator:
      score = round(sequential(eps_A_, eta_A_), eps_F_, eta_F_);
      break;
    case attention::Summation::exact: {
      Part total;
      for (std::size_t t = 0; t < D; ++t) total = {total.M + terms[t].M, 0, false};
      score = round(total, eps_F_, eta_F_);
      break;
    }
  }
  // every term above is a non-negative sum or product of non-negative doubles: fewer than
  // 2^20 such operations, each within 2^-53 relative, so the exact value is below the computed
  // one times (1 − 2^-53)^-(2^20) < 1 + 2^-30
  return (a + kq + score.D) * (1 + 0x1p-30);
}

double prune_threshold(double t, double f, double err, double C) {
  double x = std::nextafter(t - f, -HUGE_VAL);
  x = std::nextafter(x - err, -HUGE_VAL);
  return std::nextafter(x / C, -HUGE_VAL);
}

}  // namespace detail

std::optional<std::string> fast_range_refusal(const FixedOffsetHead& head) {
  if (auto why = detail::structural_refusal(head)) return why;
  if (error_analysis(head).second)
    return "C = " + head.C.to_decimal(9) +
           " is so large that an intermediate of a score could "
           "overflow in " +
           head.policy.format.name;
  return std::nullopt;
}

std::optional<mpq_class> realised_score_error_bound(const FixedOffsetHead& head) {
  if (detail::structural_refusal(head) || detail::measured_keys(head)) return std::nullopt;
  auto [E, overflow] = error_analysis(head);
  if (overflow) return std::nullopt;
  return E;
}

}  // namespace ropesim::proofs
