#pragma once
/// Internal pieces of the candidate algorithm (proofs/range/fast_range.hpp), shared by its files
/// and not installed:
///  - fast_range_error.cpp      the domain and the error bound E (forward error analysis)
///  - fast_range_candidates.cpp the candidate offsets (CandidateEnumerator) and the quick limit
///  - fast_range_realised.cpp   realised queries and keys over position ranges, the key store
///  - fast_range.cpp            the chunked, threaded evaluation and its cost estimate
#include <gmpxx.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numeric/binary64_rounding.hpp"
#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs::detail {

/// Why `head` is outside the candidate algorithm's structural domain (realisation, formats,
/// summation, scale, shape; fast_range_refusal adds the overflow check), or std::nullopt.
std::optional<std::string> structural_refusal(const FixedOffsetHead& head);

/// Whether the per-query bounds use measured key deviations (THEORY §6 "Pipelines"): true for
/// pipelines (their angle is formed in fp32, so a key's deviation from the ideal
/// (cos jθ_d, sin jθ_d) grows with j and no position-independent K or E exists), false for r1
/// and r3 (K = ε + √2·η, |k̂_c| ≤ 1, and the global E).
bool measured_keys(const FixedOffsetHead& head);

/// An upper bound of every realised table entry |ĉ|, |ŝ| before its rounding into F: 1 for r1
/// and r3; for pipelines max(1, |s|)·(1 + 2^-16), s the schedule's attention factor (used by the
/// overflow check; certified_range_fast checks every realised entry against it).
mpq_class table_bound(const FixedOffsetHead& head);

/// The coordinates (c0, c1) of rotary block d in a head of B blocks (attention's pair
/// layout: adjacent (2d, 2d+1), rotate-half (d, d+B); unrotated pairs come after).
std::pair<std::size_t, std::size_t> block_coordinates(const FixedOffsetHead& head, std::size_t d);

/// Exact t − m ≥ f for finite doubles (TwoSum; as in the scan).
inline bool lead_at_least(double t, double m, double f) {
  const double s = t - m;
  const double bb = s - t;
  const double e = (t - (s - bb)) + (-m - bb);
  return s > f || (s == f && e >= 0);
}

/// Enumerates the candidate offsets n = 1, 2, … of `head` under the bound E in increasing
/// order, on demand (a failing query usually comes long before max_length, and near the
/// threshold T = S(0) − (f_large + 2E)/C every n may be one). One block with w > 0: the
/// near-returns of n·θ/2π (a pre-filter on ||n·θ/2π||). Otherwise (several blocks, any
/// weights): a filtered scan of S(n) in binary64 with a proven margin (stated in
/// candidate_offsets' docstring and at init_filtered_sum). Keeps a reference to head.ideal.
class CandidateEnumerator {
 public:
  /// No E (pipelines: measured key deviations, no global bound): every offset is a candidate
  /// and the per-query bounds alone exclude competitors.
  CandidateEnumerator(const FixedOffsetHead& head, const std::optional<mpq_class>& E);

  /// Appends the candidates n in (done(), upto] to `out`, increasing.
  void extend(std::uint64_t upto, std::vector<std::uint64_t>& out) {
    for (std::uint64_t n = done_ + 1; n <= upto; ++n) {
      if (all_ || (filtered_ ? filtered_candidate(n) : candidate(n))) out.push_back(n);
    }
    done_ = std::max(done_, upto);
  }
  std::uint64_t done() const { return done_; }
  /// Starts the enumeration after offset n (the offsets up to n are another enumerator's).
  void start_after(std::uint64_t n) { done_ = n; }
  /// Every offset is a candidate (T ≤ min S): no filter runs.
  bool every_offset() const { return all_; }

 private:
  void init_filtered_sum();
  bool filtered_candidate(std::uint64_t n) const;
  void init_near_returns();
  bool candidate(std::uint64_t n) const;

  const CosineSum& S_;
  mpq_class T_;
  bool all_ = false;
  // the filtered scan (several frequencies)
  bool filtered_ = false;
  std::vector<double> weights_d_, theta_d_;
  double margin0_ = 0, margin1_ = 0, T_d_ = 0;
  // the near-returns (one frequency)
  double r_up_ = 0.5, r_lo_ = 0, ah_ = 0, al_ = 0, err_a_ = 0;
  std::uint64_t done_ = 0;
};

/// The head's ideal score S(n)/C = Σ_d w_d·cos(n·θ_d) in binary64 with a proven margin
/// (the filtered sum of CandidateEnumerator::init_filtered_sum): ŵ_d, θ̂_d the doubles of w_d
/// and θ_d (|θ̂_d − θ_d| ≤ e_d), W = Σ|w_d|, slope = Σ_d |w_d|·(e_d + 2^-53·|θ̂_d|).
struct IdealDoubles {
  std::vector<double> w, theta, e;
  double W = 0, slope = 0;
  explicit IdealDoubles(const CosineSum& S);
  /// u(n) ≥ S(n) (rigorous; see the definition in fast_range_candidates.cpp): S̃(n) plus
  /// 2·(W·(2^-50 + (B+3)·2^-53) + B·2^-1000) + 2·n·slope, rounded up.
  double upper(std::uint64_t n) const;
};

/// The per-query error bound of the per-position pruning (THEORY §6 "Per-query bounds"):
/// err_i ≥ |Ŝ_{i,j} − C·S(i−k−j)| for every key j ≥ 0 of the head, from the realised query
/// q̂_i alone:
///   err_i = Σ_d ||q̂_{i,d} − q_{i,d}||₂ + K·Σ_d ||q̂_{i,d}||₂ + ρ_i,
/// q_{i,d} = C·w_d·(cos((i−k)θ_d), sin((i−k)θ_d)) the ideal query block, K = ε + √2·η the
/// largest ||k̂_{j,d} − k_{j,d}||₂ of a key block (cos and sin rounded once), and ρ_i the
/// summation's rounding error bound for q̂_i against any key with |k̂_c| ≤ 1 (the forward
/// error model of realised_score_error_bound with q̂_i's own magnitudes). Evaluated in
/// binary64 on non-negative terms and rounded up (a factor 1 + 2^-30).
///
/// The split bound (THEORY §6 "Split bounds"; sequential and pairwise summation in F): the
/// summation's rounding error is bounded by the magnitudes of the partial sums this pair
/// actually forms instead of their worst case. The ideal partial sum over a node v of the
/// summation (a prefix for sequential sums, a subtree for pairwise) splits as
/// α_v(n) + β_v(σ), n = i − k − j, σ = i − k + j, so that
///   |Ŝ_{i,j} − C·S(n)| ≤ R_i + A(n),
/// R_i = Σ_d ||q̂_{i,d} − q_{i,d}||₂ + K·Σ_d ||q̂_{i,d}||₂ + Σ_c g_c·(ε|q̂_{i,c}| + η)
///       + Σ_v g_v·(η + ε·Δ_v(i)) + ε·Σ_v g_v·β̄_v   (a function of position i),
/// A(n) = ε·Σ_v g_v·|α_v(n)|                         (a function of the offset),
/// g_v = (1 + ε)^(rounded additions above v), Δ_v(i) = Σ_{c∈v} (|q̂_{i,c} − q_{i,c}| +
/// |C·w_{d(c)}|·(ε + η)), β̄_v = Σ_{blocks with one coordinate in v} |C·w_d|/2 ≥ |β_v(σ)|.
///
/// Pipelines (measured(); THEORY §6 "Pipelines"): K and |k̂_c| ≤ 1 are replaced by measured
/// values over the keys the query can see: `keys` points at B + 1 doubles, K_d ≥
/// max_j ||k̂_{j,d} − k_{j,d}||₂ for each block d and, last, M ≥ max_{j,c} |k̂_{j,c}| (over the
/// keys j < i at least: key_deviation of each, maximised). Then K·Σ_d ||q̂_d|| becomes
/// Σ_d K_d·||q̂_d||, the products' magnitudes |q̂_c|·M, and the split bound's key term
/// |C·w_d|·K_d (with the query term |q̂_c − q_c|·M).
class QueryBound {
 public:
  /// `E` is the global bound: used instead where the model does not fit binary64 (an
  /// accumulator outside binary64); none for pipelines.
  QueryBound(const FixedOffsetHead& head, const std::optional<mpq_class>& E);
  /// Whether the bounds need measured key deviations (`keys` below; pipelines).
  bool measured() const { return measured_; }
  /// err_i for the query at position i ≥ k + 1 with realised query q (head_dim doubles);
  /// `keys` as above (required when measured(), ignored otherwise).
  double error(std::uint64_t i, const double* q, const double* keys = nullptr) const;
  /// Whether the split bound applies (sequential or pairwise summation in F).
  bool has_split() const { return split_; }
  /// R_i of the split bound (has_split() only), rounded up.
  double split_error(std::uint64_t i, const double* q, const double* keys = nullptr) const;
  /// err_i and R_i from one pass over the query's blocks; R_i = +inf unless has_split() and
  /// `split` (a caller with no offset to exclude skips it).
  std::pair<double, double> error_and_split(std::uint64_t i, const double* q, bool split = true,
                                            const double* keys = nullptr) const;
  /// The key deviations of the key k (head_dim doubles) at position j into out[0..B]:
  /// out[d] ≥ ||k̂_{j,d} − (cos jθ_d, sin jθ_d)||₂ (binary64 with the libm cos and sin within
  /// 2^-50 and the argument's error, rounded up) and out[B] = max_c |k̂_{j,c}|. B + 1 doubles.
  void key_deviation(std::uint64_t j, const double* k, double* out) const;
  /// B, the rotary blocks (key_deviation writes B + 1 doubles).
  std::size_t blocks() const { return coords_.size(); }
  /// A(n) of the split bound (has_split() only), rounded up; A(−n) = A(n).
  double offset_error(std::uint64_t n) const;
  /// An upper bound of A(n) over every n (has_split() only): ε·Σ_v g_v·H_v, with slack.
  double offset_error_max() const { return eps_F_ * GH_ * 1.25; }

 private:
  /// |q̂_c − q_c| ≤ dev[c] for every coordinate c (0 outside the rotary blocks), and
  /// Σ_d ||q̂_d − q_d||₂ ≤ a, Σ_d ||q̂_d||₂ ≤ qn (each rounded up by the caller's factor).
  /// With `keys` (measured()): qn ≥ Σ_d K_d·||q̂_d||₂ instead (the key term whole).
  void deviation(std::uint64_t i, const double* q, double& a, double& qn, std::vector<double>* dev,
                 const double* keys) const;
  /// err_i from Σ_d ||q̂_d − q_d||₂ ≤ a and the key term kq (K·Σ_d ||q̂_d||₂, or measured).
  double error_from(const double* q, double a, double kq, const double* keys) const;
  /// R_i from a, kq and dev (deviation's; dev is overwritten).
  double split_from(const double* q, double a, double kq, std::vector<double>& dev,
                    const double* keys) const;
  /// The measured keys' vector, checked (measured() needs one).
  const double* keys_or_throw(const double* keys) const;
  /// Builds the summation's tree and the split bound's position-free terms.
  void init_split();
  /// An addition of the summation's tree (post-order): children are coordinates c < D or
  /// nodes D + v; g = (1 + ε)^(rounded additions above it).
  struct Node {
    std::uint32_t left, right;
    double g;
  };
  const FixedOffsetHead& head_;
  IdealDoubles ideal_;
  std::vector<std::pair<std::size_t, std::size_t>> coords_;
  std::vector<double> Cw_;  // C·w_d in binary64
  double K_ = 0, E_ = 0;
  double eps_F_ = 0, eta_F_ = 0, eps_A_ = 0, eta_A_ = 0;
  bool use_model_ = false;
  bool measured_ = false;
  // the split bound
  bool split_ = false;
  std::vector<Node> nodes_;
  std::vector<double> leaf_g_;        // g of coordinate c's product (0: a zero coordinate)
  std::vector<std::uint32_t> block_;  // block of coordinate c (B: none)
  double fixed_ = 0;  // Σ_c g_c·η + Σ_v g_v·(η + ε·β̄_v): the position-free part of R_i
  double GH_ = 0;     // Σ_v g_v·H_v, H_v = Σ_{c∈v} |C·w_d|/2
  double slope_max_ = 0;  // max_d (e_d + 2^-53·|θ̂_d|)
};

/// The measured key deviations of a pipeline (THEORY §6 "Pipelines") as certified_range_fast
/// uses them: for segments of kSegment consecutive positions, the maxima of
/// QueryBound::key_deviation over the segment's keys, then over every earlier segment (prefix
/// maxima). Query i takes the prefix of the segment holding i − 1, which covers every key j < i
/// (and a few later ones: a larger maximum is still a bound). Segments are fixed by position,
/// so the bounds do not depend on how positions are split into chunks or threads.
class KeyDeviations {
 public:
  static constexpr std::uint64_t kSegment = 64;
  /// Keeps a reference to `bound`.
  explicit KeyDeviations(const QueryBound& bound) : bound_(bound), width_(bound.blocks() + 1) {}
  /// B + 1: the doubles of one entry (K_0 … K_{B−1}, M).
  std::size_t width() const { return width_; }
  /// The segment maxima of the keys of positions [a, a + count), `keys` holding D doubles per
  /// position; `a` a multiple of kSegment (the last segment may be partial). Thread-safe.
  std::vector<double> segments(std::uint64_t a, std::uint64_t count, const double* keys,
                               std::size_t D) const;
  /// Appends the segments of the positions from `a` on (segments()' result); calls come in
  /// position order from 0. Throws std::logic_error when `a` is not where the last call ended.
  void append(std::uint64_t a, const std::vector<double>& segment_maxima);
  /// The bounds for query i ≥ 1 (width() doubles): ≥ key_deviation of every key j < i. Throws
  /// std::logic_error unless the segment of i − 1 was appended.
  const double* for_query(std::uint64_t i) const;

 private:
  const QueryBound& bound_;
  std::size_t width_;
  std::vector<double> prefix_;
};

/// σ_i: a lower bound of (t − f − err)/C in binary64 (each step rounded down): a competitor
/// at offset n with u(n) ≤ σ_i scores Ŝ ≤ C·S(n) + err ≤ t − f and cannot break the gap.
double prune_threshold(double t, double f, double err, double C);

/// The offsets n with their upper bounds u(n), indexed by u in buckets; within a bucket the
/// offsets are in the order added (increasing n).
class OffsetIndex {
 public:
  /// u indexes the entry; v is a second bound carried along (the per-query bound's u(n) in
  /// the index of the split bound's u(n) + A(n)/C).
  struct Entry {
    double u, v;
    std::uint32_t n;
  };
  /// Buckets over [−W − 1, W + 1] (larger u share the top bucket).
  explicit OffsetIndex(double W);
  void add(std::uint64_t n, double u, double v = 0) {
    buckets_[bucket(u)].push_back({u, v, static_cast<std::uint32_t>(n)});
    ++size_;
  }
  std::size_t size() const { return size_; }
  /// Calls f(entry) for every entry with u > sigma and n ≤ max_n, from the bucket of the
  /// largest u down (increasing n within a bucket).
  template <typename Fn>
  void for_each_above(double sigma, std::uint64_t max_n, Fn&& f) const {
    const std::size_t lo = bucket(sigma);
    for (std::size_t b = buckets_.size(); b-- > lo;) {
      for (const Entry& e : buckets_[b]) {
        if (e.n > max_n) break;
        if (e.u > sigma) f(e);
      }
    }
  }

 private:
  std::size_t bucket(double u) const {
    // monotone in u (RN of a monotone expression), so an entry with u > σ is in a bucket
    // ≥ bucket(σ)
    const double x = (u - lo_) * scale_;
    if (!(x > 0)) return 0;
    if (x >= static_cast<double>(buckets_.size() - 1)) return buckets_.size() - 1;
    return static_cast<std::size_t>(x);
  }
  std::vector<std::vector<Entry>> buckets_;
  double lo_ = -1, scale_ = 1;
  std::size_t size_ = 0;
};

/// Keys k_j of positions [begin, end), head_dim doubles each (elements of F).
struct KeyBlock {
  std::uint64_t begin = 0, end = 0;
  std::vector<double> keys;
};

/// The head's realised queries and keys from its realised rotations, each position's rotation
/// realised once (realise_block over a range of positions). The biases pass the matvec once
/// (Q = K = 0, so q_p = R̂_p(b̃_q) and k_p = R̂_p(b̃_k) with b̃ = matvec(0, 0, b) independent of
/// p); each rotation is then THEORY §2.1's (rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) +
/// rnd(c·x1))) in F, computed in binary64 with numeric::Binary64Rounding where that is exact
/// (round-to-nearest-even, p ≤ 25 or binary64: NUMERIC §2) and by attention::rotate
/// otherwise. Both give head_query / head_key's values bit for bit (tests/proofs:
/// certified_range_fast against the one-thread reference in tests/proofs/fast_range_reference,
/// which calls them). Keeps a reference to `head`.
class RealisedHead {
 public:
  explicit RealisedHead(const FixedOffsetHead& head);

  /// head_dim: the doubles of one query or key.
  std::size_t dim() const { return D_; }

  /// The realised pairs of every block at positions [begin, end): pairs[b][p − begin].
  std::vector<std::vector<attention::RealisedPair>> realise(std::uint64_t begin,
                                                            std::uint64_t end) const;

  /// q (when `q` is not null) and k (when `k` is not null) at the position of pairs[·][index],
  /// D doubles each.
  void rotate(const std::vector<std::vector<attention::RealisedPair>>& pairs, std::size_t index,
              double* q, double* k) const;

  /// The keys of positions [begin, end).
  KeyBlock keys(std::uint64_t begin, std::uint64_t end) const;

 private:
  const FixedOffsetHead& head_;
  std::size_t D_, B_;
  numeric::Binary64Rounding R_;
  bool fast_ = false;
  std::vector<numeric::Value> bq_, bk_;
  std::vector<double> bq_d_, bk_d_;
  std::vector<std::pair<std::size_t, std::size_t>> coords_;
};

/// k_j in consecutive KeyBlocks sorted by position (nullptr when no block holds j).
template <typename Blocks>
const double* find_key(const Blocks& blocks, std::uint64_t j, std::size_t D) {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), j,
                             [](std::uint64_t v, const KeyBlock& b) { return v < b.begin; });
  if (it == blocks.begin()) return nullptr;
  --it;
  if (j >= it->end) return nullptr;
  return &it->keys[D * (j - it->begin)];
}

/// The keys kept between batches: consecutive KeyBlocks covering [begin(), end()), the oldest
/// dropped once they exceed the byte cap and no query still to come needs them as a target or
/// a negative-offset competitor (older keys a candidate offset needs are realised again).
class KeyStore {
 public:
  std::uint64_t begin() const { return blocks_.empty() ? end_ : blocks_.front().begin; }
  void append(KeyBlock&& b) {
    bytes_ += b.keys.size() * sizeof(double);
    end_ = b.end;
    blocks_.push_back(std::move(b));
  }
  /// Drops the oldest blocks while over `cap` bytes and ending at or before `keep_from`.
  void evict(std::size_t cap, std::uint64_t keep_from) {
    while (bytes_ > cap && !blocks_.empty() && blocks_.front().end <= keep_from) {
      bytes_ -= blocks_.front().keys.size() * sizeof(double);
      blocks_.pop_front();
    }
  }
  /// k_j for begin() ≤ j < end().
  const double* find(std::uint64_t j, std::size_t D) const { return find_key(blocks_, j, D); }

 private:
  std::deque<KeyBlock> blocks_;
  std::uint64_t end_ = 0;
  std::size_t bytes_ = 0;
};

/// Keys kept between batches before the oldest are dropped (256 MB: 262,144 positions of
/// llama2-7b's head_dim 128; ScanOptions::key_store_bytes' default).
constexpr std::size_t kKeyStoreBytes = std::size_t{1} << 28;

}  // namespace ropesim::proofs::detail
