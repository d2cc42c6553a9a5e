#pragma once
/// The MOD_m^r atom under a NON-periodic schedule (construction C4' of THEORY §7, "MOD under a
/// non-periodic schedule"; the bounded counterpart of C4, RoPE-X App C.3, as C5 is the bounded
/// counterpart of an exact Y^k): the residue test of C4 built on one rotary block of the named
/// schedule, exact only up to its certified range N_max^MOD.
///
/// The head (head_dim = the schedule's dimension, plus one unrotated pair when the schedule has
/// none; Q = 0, value_dim 1): every rotary block of the schedule realised by r1 (ideal phase,
/// rounded output), as the schedule's own Y^k heads are, and
///   chosen block d   the block whose angle θ_d is nearest a turn 2πa/m with gcd(a, m) = 1
///                    (ε = θ_d − 2πa/m, reduced into (−π, π]); the three nearest are measured
///                    and the one with the longest certified range kept;
///   query bias       (round_F(cos φ), round_F(−sin φ)), φ = 2πar/m, on block d, each rounded once
///                    from the exact real; (1, 0) on the baseline pair (the schedule's first
///                    unrotated pair, or the appended one); 0 elsewhere;
///   key              (Ĉ, 0) on block d at BOS (K reads the BOS coordinate) and (w, 0) on the
///                    baseline pair at every other token (K reads ⊤), b̂ = round_F(cos(π/m)),
///                    w = round_F(Ĉ·b̂);
///   value            1 at BOS, 0 elsewhere.
/// In exact arithmetic the query at i scores BOS with C·cos(2πa(i − r)/m + i·ε) and every other
/// key with C·cos(π/m): when i ≡ r (mod m) BOS must lead, cos(i·ε) > cos(π/m); otherwise the
/// nearest wrong residue must trail, cos(2π/m − |i·ε|) < cos(π/m). Both hold while
/// |i·ε| < π/m, so the phase drift i·ε, not the table, bounds the simulation: the exact-arithmetic
/// drift bound is the largest L with (L + 1)·|ε| ≤ π/m − η, η from C·(cos(π/m − η) − cos(π/m)) =
/// f_large. (b = cos(π/m) sits halfway in angle between the right and the nearest wrong residue;
/// C4's b_m = cos²(π/m) would leave only 2π/m − arccos(cos²(π/m)) < π/m of drift.) The
/// certified range is not this estimate: it is measured from the realised rotations.
///
/// Certified range N_max^MOD (THEORY §7 C4', as eq. 10 of RoPE-X defines N_max^(k)): the largest
/// L such that for every query 2 ≤ i ≤ L + 1 the realised winner leads by at least f_large(F) —
/// BOS over the non-BOS keys when i ≡ r (mod m), the non-BOS keys over BOS otherwise (the lead
/// is the exact real difference of two elements of F). Query 1 sees only BOS and is the
/// first-position flag's (mod_components). Every non-BOS key scores the same realised value:
/// its rotary coordinates are zero, so the rotations change only the signs of zero terms of
/// the sequential dot product. Words of length ≤ N_max^MOD are classified by the atom exactly.
#include <gmpxx.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "attention/transformer/transformer.hpp"
#include "numeric/value.hpp"
#include "proofs/compiler/mod_wiring.hpp"

namespace ropesim::proofs {

/// True when every rotary block of `schedule` is a rational turn (θ = 2πa/m, including θ = 0),
/// so that its r1 rotations are periodic (THEORY §3 Prop 2.2, Def 2.1): MOD atoms then use C4's
/// periodic table; otherwise C4' (make_bounded_mod_head). A schedule without rotary blocks is
/// periodic (nothing rotates).
bool periodic_schedule_p(const attention::Schedule& schedule);

/// The block of a periodic `schedule` on which C4 builds the MOD_m^r atom (THEORY §7 C4): the
/// first rotary block whose turn is exactly 1/m (θ = 2π/m; C4's r3 table is that block's).
/// Throws Refusal (RefusalReason::mod_period) with one line naming the schedule, its turns
/// and the turn needed when there is none: a periodic schedule of other periods cannot test
/// residues mod m, and is not silently replaced by the atom's own table. m ≥ 2.
std::size_t periodic_mod_block(const attention::Schedule& schedule, std::uint64_t m,
                               std::uint64_t r);

/// What to build.
struct BoundedModSpec {
  std::uint64_t m = 2;  ///< the modulus, m ≥ 2
  std::uint64_t r = 0;  ///< the residue, 0 ≤ r < m
  /// The named schedule (one position axis, at least one rotary block); realised by r1.
  attention::Schedule schedule = attention::single_schedule(1);
  /// C (exact, rounded once into F); nullopt = auto: the powers of two from the zero-drift
  /// bound f_large/(1 − cos(π/m)) up to that bound·2^(p+4) or F's largest finite power of two,
  /// keeping the C with the longest range (the smallest C on ties).
  std::optional<mpq_class> C;
  /// The longest range measured (queries up to max_length + 1); 0 = kBoundedModMaxLength.
  std::uint64_t max_length = 0;
  attention::EvaluationPolicy policy;  ///< F, rounding, summation (THEORY §2.1)
};

/// The default range limit of the scan (it stops at the first failing query, so only heads
/// certified that far cost this many realisations).
inline constexpr std::uint64_t kBoundedModMaxLength = 1000000;

/// One (block, C) measured.
struct BoundedModCandidate {
  std::size_t block = 0;  ///< 0-based block index in the schedule
  std::uint64_t a = 1;    ///< the turn 2πa/m the block approximates, gcd(a, m) = 1
  numeric::Value C;
  std::uint64_t n_max = 0;  ///< N_max^MOD of this head (0 when query 2 already fails)
  bool at_limit = false;    ///< no query up to max_length + 1 failed
};

/// The constructed head and its certificate.
struct BoundedModHead {
  attention::AttentionHead head;  ///< wired as given; named MOD_m^r
  attention::EvaluationPolicy policy;
  std::uint64_t m = 2, r = 0;
  std::string schedule;      ///< the schedule's spec
  std::size_t block = 0;     ///< the chosen block (0-based)
  std::uint64_t a = 1;       ///< its turn 2πa/m
  double theta = 0;          ///< θ_block (binary64, display)
  double epsilon = 0;        ///< ε = θ − 2πa/m reduced into (−π, π] (binary64, display)
  std::size_t baseline = 0;  ///< head coordinate of the baseline pair's first coordinate
  numeric::Value C, b, key_weight, query_cos, query_sin, f_large;
  bool auto_C = false;
  std::uint64_t n_max = 0;  ///< N_max^MOD
  bool at_limit = false;    ///< the scan reached max_length + 1 without a failure
  std::uint64_t max_length = 0;
  /// The first failing query (n_max + 2) and its scores, when not at_limit.
  std::optional<std::uint64_t> fail_query;
  numeric::Value fail_bos_score, fail_other_score;
  /// The exact-arithmetic drift bound (binary64 estimate, see the file comment); -1 when even
  /// zero drift does not give f_large at this C.
  double drift_bound = 0;
  std::vector<BoundedModCandidate> candidates;  ///< every (block, C) measured
};

/// Builds the C4' head of MOD_m^r on `spec.schedule` and measures its certified range (see the
/// file comment; THEORY §7 C4'). Throws ropesim::InvalidArgument (one line) if m < 2, r ≥ m, the
/// schedule is multi-axis or has no rotary block, the wiring names a coordinate its space lacks,
/// f_large(F) is undefined, or the given C is not positive and finite in F; throws
/// Refusal(mod_schedule) naming the schedule, the nearest block (θ, a, ε) and the best range
/// found when no (block, C) certifies a range of at least 2m (below it some residue class has at
/// most one query in the range 2..N_max+1, so the head tests single positions, not a residue: no
/// bounded MOD simulation is claimed).
BoundedModHead make_bounded_mod_head(const BoundedModSpec& spec, const ModWiring& wiring = {});

/// The head's report as JSON: `m r schedule block a theta epsilon realization C C_auto b
/// key_weight query_bias f_large n_max at_limit max_length fail_query fail_bos_score
/// fail_other_score drift_bound candidates` (elements of F as exact decimal strings). Does not
/// print.
nlohmann::json to_json(const BoundedModHead& head);

}  // namespace ropesim::proofs
