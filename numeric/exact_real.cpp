#include "numeric/exact_real.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::numeric {

namespace detail {

struct ExactNode {
  enum class Kind { rational, pi_times, power, add, sub, mul, div };
  Kind kind = Kind::rational;
  mpq_class q;         // rational value; coefficient of π; coefficient of the power
  mpq_class beta;      // power only
  mpq_class exponent;  // power only (irrational power: exponent not an integer, β^e ∉ Q)
  std::shared_ptr<const ExactNode> a, b;
  std::optional<mpq_class> rational_value;  // exact value when known rational
};

}  // namespace detail

namespace {

using Node = detail::ExactNode;
using NodePtr = std::shared_ptr<const Node>;

NodePtr make_rational(const mpq_class& q) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::rational;
  n->q = q;
  n->rational_value = q;
  return n;
}

/// Exact k-th root of a non-negative integer, if it is an integer.
std::optional<mpz_class> exact_root(const mpz_class& x, unsigned long k) {
  mpz_class r;
  if (mpz_root(r.get_mpz_t(), x.get_mpz_t(), k) != 0) return r;
  return std::nullopt;
}

mpq_class rational_pow(const mpq_class& base, long n) {
  mpz_class num, den;
  unsigned long e = static_cast<unsigned long>(n < 0 ? -n : n);
  mpz_pow_ui(num.get_mpz_t(), base.get_num_mpz_t(), e);
  mpz_pow_ui(den.get_mpz_t(), base.get_den_mpz_t(), e);
  mpq_class r(num, den);
  r.canonicalize();
  if (n < 0) r = 1 / r;
  return r;
}

/// Interval enclosure at the precision of lo/hi. Returns false when a divisor interval
/// contains 0 (the caller retries at a higher precision).
bool enclose_node(const Node& n, mpfr_ptr lo, mpfr_ptr hi) {
  const mpfr_prec_t w = mpfr_get_prec(lo);
  switch (n.kind) {
    case Node::Kind::rational:
      mpfr_set_q(lo, n.q.get_mpq_t(), MPFR_RNDD);
      mpfr_set_q(hi, n.q.get_mpq_t(), MPFR_RNDU);
      return true;
    case Node::Kind::pi_times: {
      Mpfr pl(w), ph(w);
      mpfr_const_pi(pl, MPFR_RNDD);
      mpfr_const_pi(ph, MPFR_RNDU);
      interval_mul_q(lo, hi, pl, ph, n.q);
      return true;
    }
    case Node::Kind::power: {
      // c · exp(e · log β), every step directed outward.
      Mpfr bl(w), bh(w), ll(w), lh(w), tl(w), th(w);
      mpfr_set_q(bl, n.beta.get_mpq_t(), MPFR_RNDD);
      mpfr_set_q(bh, n.beta.get_mpq_t(), MPFR_RNDU);
      if (mpfr_sgn(bl) <= 0) return false;
      mpfr_log(ll, bl, MPFR_RNDD);
      mpfr_log(lh, bh, MPFR_RNDU);
      interval_mul_q(tl, th, ll, lh, n.exponent);
      mpfr_exp(ll, tl, MPFR_RNDD);
      mpfr_exp(lh, th, MPFR_RNDU);
      interval_mul_q(lo, hi, ll, lh, n.q);
      return true;
    }
    default:
      break;
  }
  Mpfr al(w), ah(w), bl(w), bh(w);
  if (!enclose_node(*n.a, al, ah) || !enclose_node(*n.b, bl, bh)) return false;
  switch (n.kind) {
    case Node::Kind::add:
      mpfr_add(lo, al, bl, MPFR_RNDD);
      mpfr_add(hi, ah, bh, MPFR_RNDU);
      return true;
    case Node::Kind::sub:
      mpfr_sub(lo, al, bh, MPFR_RNDD);
      mpfr_sub(hi, ah, bl, MPFR_RNDU);
      return true;
    case Node::Kind::mul:
    case Node::Kind::div: {
      const bool is_div = n.kind == Node::Kind::div;
      if (is_div && mpfr_sgn(bl) <= 0 && mpfr_sgn(bh) >= 0) return false;
      mpfr_ptr xs[2] = {al, ah};
      mpfr_ptr ys[2] = {bl, bh};
      Mpfr t(w), best_lo(w), best_hi(w);
      bool first = true;
      for (auto* x : xs) {
        for (auto* y : ys) {
          if (is_div)
            mpfr_div(t, x, y, MPFR_RNDD);
          else
            mpfr_mul(t, x, y, MPFR_RNDD);
          if (first || mpfr_less_p(t, best_lo)) mpfr_set(best_lo, t, MPFR_RNDD);
          if (is_div)
            mpfr_div(t, x, y, MPFR_RNDU);
          else
            mpfr_mul(t, x, y, MPFR_RNDU);
          if (first || mpfr_greater_p(t, best_hi)) mpfr_set(best_hi, t, MPFR_RNDU);
          first = false;
        }
      }
      mpfr_set(lo, best_lo, MPFR_RNDD);
      mpfr_set(hi, best_hi, MPFR_RNDU);
      return true;
    }
    default:
      return false;
  }
}

std::string rational_text(const mpq_class& q) { return q.get_str(); }

/// Concatenation by appends (GCC 12's -Wrestrict misfires on `"literal" + std::string`).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (s.append(parts), ...);
  return s;
}

std::string node_text(const Node& n) {
  switch (n.kind) {
    case Node::Kind::rational:
      return rational_text(n.q);
    case Node::Kind::pi_times:
      return n.q == 1 ? std::string("pi") : cat(rational_text(n.q), "*pi");
    case Node::Kind::power: {
      std::string s = cat(rational_text(n.beta), "^(", rational_text(n.exponent), ")");
      return n.q == 1 ? s : cat(rational_text(n.q), "*", s);
    }
    case Node::Kind::add:
      return cat("(", node_text(*n.a), " + ", node_text(*n.b), ")");
    case Node::Kind::sub:
      return cat("(", node_text(*n.a), " - ", node_text(*n.b), ")");
    case Node::Kind::mul:
      return cat(node_text(*n.a), "*", node_text(*n.b));
    case Node::Kind::div:
      return cat(node_text(*n.a), "/(", node_text(*n.b), ")");
  }
  return "?";
}

NodePtr binary(Node::Kind kind, const NodePtr& a, const NodePtr& b) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->a = a;
  n->b = b;
  return n;
}

}  // namespace

ExactReal::ExactReal() : node_(make_rational(0)) {}
ExactReal::ExactReal(std::shared_ptr<const detail::ExactNode> node) : node_(std::move(node)) {}

ExactReal ExactReal::rational(const mpq_class& q) {
  mpq_class c = q;
  c.canonicalize();
  return ExactReal(make_rational(c));
}

ExactReal ExactReal::pi_times(const mpq_class& q) {
  if (q == 0) return rational(0);
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::pi_times;
  n->q = q;
  n->q.canonicalize();
  return ExactReal(n);
}

ExactReal ExactReal::power(const mpq_class& beta, const mpq_class& exponent,
                           const mpq_class& coefficient) {
  if (beta <= 0) {
    throw InvalidArgument("power base must be > 0, got " + beta.get_str());
  }
  mpq_class e = exponent;
  e.canonicalize();
  if (coefficient == 0) return rational(0);
  if (e == 0 || beta == 1) return rational(coefficient);
  // β^(n/k) with gcd(n, k) = 1 is rational iff β^(1/k) is (Bezout), i.e. iff numerator and
  // denominator of β are perfect k-th powers.
  const mpz_class& k = e.get_den();
  if (k.fits_ulong_p()) {
    const unsigned long kk = k.get_ui();
    auto rn = exact_root(beta.get_num(), kk);
    auto rd = exact_root(beta.get_den(), kk);
    if (rn && rd && e.get_num().fits_slong_p()) {
      mpq_class root(*rn, *rd);
      root.canonicalize();
      return rational(coefficient * rational_pow(root, e.get_num().get_si()));
    }
  }
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::power;
  n->q = coefficient;
  n->q.canonicalize();
  n->beta = beta;
  n->beta.canonicalize();
  n->exponent = e;
  return ExactReal(n);
}

ExactReal operator+(const ExactReal& a, const ExactReal& b) {
  auto ra = a.as_rational(), rb = b.as_rational();
  if (ra && rb) return ExactReal::rational(*ra + *rb);
  if (ra && *ra == 0) return b;
  if (rb && *rb == 0) return a;
  auto pa = a.as_pi_multiple(), pb = b.as_pi_multiple();
  if (pa && pb) return ExactReal::pi_times(*pa + *pb);
  return ExactReal(binary(detail::ExactNode::Kind::add, a.node_, b.node_));
}

ExactReal operator-(const ExactReal& a, const ExactReal& b) {
  auto ra = a.as_rational(), rb = b.as_rational();
  if (ra && rb) return ExactReal::rational(*ra - *rb);
  if (rb && *rb == 0) return a;
  auto pa = a.as_pi_multiple(), pb = b.as_pi_multiple();
  if (pa && pb) return ExactReal::pi_times(*pa - *pb);
  return ExactReal(binary(detail::ExactNode::Kind::sub, a.node_, b.node_));
}

ExactReal operator*(const ExactReal& a, const ExactReal& b) {
  auto ra = a.as_rational(), rb = b.as_rational();
  if (ra && rb) return ExactReal::rational(*ra * *rb);
  if ((ra && *ra == 0) || (rb && *rb == 0)) return ExactReal::rational(0);
  if (ra && *ra == 1) return b;
  if (rb && *rb == 1) return a;
  // rational · (c·β^e) and rational · (q·π) stay leaves.
  const ExactReal* r = ra ? &a : (rb ? &b : nullptr);
  const ExactReal* o = ra ? &b : (rb ? &a : nullptr);
  if (r != nullptr) {
    const mpq_class q = *r->as_rational();
    const auto& on = *o->node_;
    if (on.kind == detail::ExactNode::Kind::power) {
      return ExactReal::power(on.beta, on.exponent, on.q * q);
    }
    if (on.kind == detail::ExactNode::Kind::pi_times) return ExactReal::pi_times(on.q * q);
  }
  return ExactReal(binary(detail::ExactNode::Kind::mul, a.node_, b.node_));
}

ExactReal operator/(const ExactReal& a, const ExactReal& b) {
  if (b.is_zero()) throw InvalidArgument("division of " + a.to_string() + " by exact zero");
  auto rb = b.as_rational();
  if (rb) return a * ExactReal::rational(1 / *rb);
  if (a.is_zero()) return a;
  return ExactReal(binary(detail::ExactNode::Kind::div, a.node_, b.node_));
}

std::optional<mpq_class> ExactReal::as_rational() const { return node_->rational_value; }

bool ExactReal::is_zero() const {
  return node_->rational_value.has_value() && *node_->rational_value == 0;
}

std::optional<mpq_class> ExactReal::as_pi_multiple() const {
  if (node_->kind == detail::ExactNode::Kind::pi_times) return node_->q;
  if (is_zero()) return mpq_class(0);
  return std::nullopt;
}

void ExactReal::enclose(mpfr_ptr lo, mpfr_ptr hi) const {
  const mpfr_prec_t p = mpfr_get_prec(lo);
  if (node_->rational_value) {
    mpfr_set_q(lo, node_->rational_value->get_mpq_t(), MPFR_RNDD);
    mpfr_set_q(hi, node_->rational_value->get_mpq_t(), MPFR_RNDU);
    return;
  }
  for (mpfr_prec_t w = p + 16; w <= (1 << 17); w *= 2) {
    Mpfr l(w), h(w);
    if (enclose_node(*node_, l, h)) {
      mpfr_set(lo, l, MPFR_RNDD);
      mpfr_set(hi, h, MPFR_RNDU);
      return;
    }
  }
  throw std::runtime_error("ExactReal::enclose: cannot separate a divisor from 0 in " +
                           to_string());
}

RealApproximation enclosure_oracle(Enclosure enclose, std::string what) {
  return [enclose = std::move(enclose), what = std::move(what)](mpfr_ptr y,
                                                                mpfr_prec_t prec) -> std::uint64_t {
    for (mpfr_prec_t w = prec + 32; w <= (1 << 18); w *= 2) {
      Mpfr lo(w), hi(w), mid(w + 1), err(64);
      enclose(lo, hi);
      if (mpfr_sgn(lo) * mpfr_sgn(hi) <= 0) continue;  // straddles 0: refine
      mpfr_add(mid, lo, hi, MPFR_RNDN);                // exact at w + 1 bits
      mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
      mpfr_set(y, mid, MPFR_RNDN);
      // err = max(hi - y, y - lo), rounded up, in ulps of y: err / 2^(EXP(y) - prec)
      Mpfr d1(64), d2(64);
      mpfr_sub(d1, hi, y, MPFR_RNDU);
      mpfr_sub(d2, y, lo, MPFR_RNDU);
      mpfr_max(err, d1, d2, MPFR_RNDU);
      mpfr_mul_2si(err, err, -(static_cast<long>(mpfr_get_exp(y)) - prec), MPFR_RNDU);
      mpfr_ceil(err, err);
      if (mpfr_cmp_ui(err, 1u << 20) > 0) continue;
      const std::uint64_t e = mpfr_get_ui(err, MPFR_RNDU);
      return std::max<std::uint64_t>(e, 1);  // never claim exactness
    }
    throw std::runtime_error("enclosure too wide at 2^18 bits for " + what);
  };
}

std::uint64_t ExactReal::approximate(mpfr_ptr y, mpfr_prec_t prec) const {
  if (node_->rational_value) {
    const int t = mpfr_set_q(y, node_->rational_value->get_mpq_t(), MPFR_RNDN);
    return t == 0 ? 0 : 1;
  }
  const ExactReal self = *this;
  return enclosure_oracle([self](mpfr_ptr lo, mpfr_ptr hi) { self.enclose(lo, hi); }, to_string())(
      y, prec);
}

RealApproximation ExactReal::oracle() const {
  ExactReal self = *this;
  return [self](mpfr_ptr y, mpfr_prec_t prec) { return self.approximate(y, prec); };
}

int ExactReal::sign() const {
  if (node_->rational_value) return sgn(*node_->rational_value);
  for (mpfr_prec_t w = 64; w <= 65536; w *= 2) {
    Mpfr lo(w), hi(w);
    enclose(lo, hi);
    if (mpfr_sgn(lo) > 0) return 1;
    if (mpfr_sgn(hi) < 0) return -1;
  }
  throw std::runtime_error("ExactReal::sign undecided at 65536 bits for " + to_string());
}

double ExactReal::to_double() const {
  Mpfr lo(80), hi(80);
  enclose(lo, hi);
  mpfr_add(lo, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(lo, lo, 1, MPFR_RNDN);
  return mpfr_get_d(lo, MPFR_RNDN);
}

std::string ExactReal::to_string() const { return node_text(*node_); }

int compare(const ExactReal& a, const ExactReal& b) { return (a - b).sign(); }

}  // namespace ropesim::numeric
