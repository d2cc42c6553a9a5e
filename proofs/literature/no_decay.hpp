#pragma once
/// Item (iii) of "Round and Round We Go" [RRWG, Barbero et al. 2024, arXiv 2410.06205]: RoPE
/// need not decay with distance. A concrete q, k: the unit first coordinate of every rotary
/// block of a schedule, so that the exact score at relative distance n is
///     S(n) = (R_{j+n} q)·(R_j k) = Σ_d cos(n·θ_d),   S(0) = number of blocks,
/// and on the highest frequency alone (`single:g=1`, θ_1 = 1 rad/token) S(n) = cos n, which
/// comes back closer to its maximum 1 than ever before at every record distance n = 1, 6, 19,
/// 25, 44, 333, 710, 103993, … (the convergent denominators of 1/2π; proofs/range/records.hpp): no
/// decay at all. The realised score computes the same product in F with the realised
/// rotations R̂ (THEORY §3), which depend on both positions (docs/BOUNDS.md §5).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "numeric/summation.hpp"
#include "numeric/value.hpp"
#include "proofs/common/exact_trig.hpp"

namespace ropesim::proofs {

/// S(n) = Σ_d cos(n·θ_d) over the rotary blocks of `s` (weights 1): the exact score of the
/// unit first-coordinate q, k at distance n (CosineSum::approximate gives it with a proven
/// error bound). Throws InvalidArgument if `s` has no rotary block.
CosineSum alignment_sum(const attention::Schedule& s);

/// The realised score Ŝ = (R̂_i q)·(R̂_j k) in F for the q, k above (elements 1 and 0 of F):
/// R̂_i by attention::realise under `realisation` (its format is F), applied to q with the
/// realisation's rotation arithmetic (adjacent pairs; THEORY §2.1), and the dot product under
/// `policy` (policy.format must be the realisation's format). i is the query position, j the
/// key position (the distance is i − j). Throws InvalidArgument if the realisation does not
/// apply to `s` or the formats differ.
numeric::Value realised_alignment_score(const attention::Schedule& s,
                                        const attention::Realisation& realisation,
                                        std::uint64_t query_position, std::uint64_t key_position,
                                        const numeric::EvaluationPolicy& policy);

/// realised_alignment_score with the realisation's own format F and F's default evaluation
/// policy (sequential sum, round to nearest-even): the score as `table bounds --kind
/// no-decay` reports it, with F held once (by the realisation).
numeric::Value realised_alignment_score(const attention::Schedule& s,
                                        const attention::Realisation& realisation,
                                        std::uint64_t query_position, std::uint64_t key_position);

/// What no_decay_study measures.
struct NoDecayOptions {
  attention::Schedule schedule;                      ///< the schedule of q and k
  std::vector<attention::Realisation> realisations;  ///< one column each (each applies to it)
  std::uint64_t max_length = 65536;                  ///< the largest record distance
  std::uint64_t key_position = 0;                    ///< j; the query sits at j + n
};

/// One distance n: the exact score S(n) (nearest double, CosineSum::approximate) and the
/// realised one per realisation.
struct NoDecayRow {
  std::uint64_t n = 0;
  double exact = 0;
  std::vector<numeric::Value> realised;
};

/// The rows at n = 0 and at every record distance of alignment_sum(schedule) up to max_length
/// (record_distances): S(n) beside realised_alignment_score(schedule, r, j + n, j) for each
/// realisation r. Throws InvalidArgument if a realisation does not apply to the schedule, or
/// like alignment_sum.
std::vector<NoDecayRow> no_decay_study(const NoDecayOptions& options);

/// The rows as JSON: [{"n", "exact" (a number), "realised": [value per realisation: a number,
/// or "nan", "inf", "-inf"; the nearest binary64 for a format wider than fp64)]}].
nlohmann::json to_json(const std::vector<NoDecayRow>& rows);

}  // namespace ropesim::proofs
