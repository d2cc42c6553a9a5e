#pragma once
/// The Y^k transformer (construction C5, THEORY §6–§7; RoPE-X App D) and the L-simulation
/// check of Cor 4.1: for k ≤ L ≤ N_max^(k) the transformer computes Y^k π_a at every position
/// of every word of length ≤ L over {a, b}.
///
/// The model (named residual coordinates in this order, d_model = 5 + 2k; `coordinates` in the
/// spec): `sym:a`, `sym:b` (one-hot symbols), `top` (⊤: 1 at every token but BOS), `y` (the
/// Y^k head's output), `raw:P^l top` (the raw P-head outputs r_l, l = 1..k), `P^l top` (their
/// re-binarised values p_l = P^l⊤), `out` (the gated output Y^k π_a).
///   Layer 1: the Y^k head (make_fixed_offset_head; value ψ = π_a, 0 at BOS) and a NoPE head
///   computing P⊤ [THEORY §7 C1: score f_large where ⊤ holds, 0 at BOS; value ⊤]; FFN
///   re-binarises r_1 with (ReLU(r − 1/4) − ReLU(r − 1/2))·4 (C1, Patch 2).
///   Layers 2..k: P(p_{l−1}) the same way, so p_k = P^k⊤ holds iff i > k (the gate of
///   RoPE-X App D, computed in unrotated (NoPE) dimensions).
///   Layer k+1: FFN only, out = ReLU(y + 2·p_k − 2) (= y when p_k = 1, 0 when p_k = 0, for
///   any y ∈ [0, 2)).
///   Classifier: out − 1/2 > 0.
/// Embeddings: a = e_sym:a + e_top, b = e_sym:b + e_top, EOS = e_top, BOS = 0.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "attention/transformer/transformer.hpp"
#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs {

/// The index of the residual coordinate `out` (the gated output Y^k π_a) in offset_model's
/// named space for offset k.
std::size_t offset_output_coordinate(std::uint64_t k);

/// The shape of offset_model(spec) without building it (d_model 5 + 2k, k + 1 layers, the
/// Y^k head and k P heads, 2k + 1 hidden units), for the budget checks before it is built.
attention::ModelShape offset_model_shape(const FixedOffsetSpec& spec);

/// Builds the Y^k π_a transformer for the head described by `spec` (its schedule, weights,
/// C, k, realisation and policy). Throws like make_fixed_offset_head.
attention::Model offset_model(const FixedOffsetSpec& spec);

/// Y^k π_a at position i of `word` over {a, b} (THEORY §4): i > k and w_{i−k} = a.
/// Positions 1..N+1 (N + 1 is EOS, where the formula is read); false at 0 (BOS).
bool offset_formula(std::string_view word, std::uint64_t k, std::uint64_t position);

/// Options of the L-simulation check.
struct SimulationOptions {
  /// Every word of length ≤ min(L, exhaustive_length) is run (2^(n+1) − 1 words).
  std::uint64_t exhaustive_length = 16;
  /// Random words with lengths up to min(L, random_max_length): the longest first, then
  /// uniformly random lengths.
  std::uint64_t random_max_length = 2000;
  std::size_t random_words = 4;
  std::uint64_t seed = 1;
};

/// The first disagreement between the transformer and the formula.
struct Disagreement {
  std::string word;
  std::uint64_t position = 0;  ///< 0-based (BOS = 0, EOS = N + 1)
  bool expected = false;       ///< Y^k π_a at that position
  std::string got;             ///< the output coordinate's exact decimal value
};

/// Result of the check.
struct SimulationReport {
  std::uint64_t L = 0;
  std::uint64_t exhaustive_length = 0;  ///< min(L, options.exhaustive_length)
  std::uint64_t words = 0;              ///< words run
  std::uint64_t positions = 0;          ///< positions compared
  std::optional<Disagreement> first;    ///< nullopt: no disagreement
  double seconds = 0;
};

/// Runs the Y^k transformer (offset_model(spec)) on every word over {a, b} of length
/// ≤ min(L, exhaustive_length) and on random words of lengths ≤ min(L, random_max_length),
/// and compares the output coordinate with Y^k π_a at every position 0..N+1 (and the
/// classifier's decision at EOS). Stops at the first disagreement. [THEORY §5 Cor 4.1]
/// Throws InvalidArgument like make_fixed_offset_head, or if L < 1.
/// The work of check_offset_simulation(spec, L, options) as attention::run_work summed over
/// its words (2^(n) words of each length n ≤ exhaustive length, then the random words at
/// their longest possible length), for check_budget before the check starts; its memory is the
/// model's (spec_number_count Values) and one run of the longest word. The model is not built
/// (offset_model_shape): for k up to 10^6 it would not fit.
WorkEstimate offset_simulation_work(const FixedOffsetSpec& spec, std::uint64_t L,
                                    const SimulationOptions& options);

SimulationReport check_offset_simulation(const FixedOffsetSpec& spec, std::uint64_t L,
                                         const SimulationOptions& options = {});

/// What an L-simulation check says about a measured certified range (THEORY §5 Cor 4.1:
/// the Y^k transformer L-simulates Y^k π_a for k ≤ L ≤ N_max^(k)).
enum class SimulationOutcome {
  not_run,  ///< L < k: Cor 4.1 needs k ≤ L, nothing to simulate
  agrees,   ///< no disagreement on the words run
  bug,      ///< a disagreement with L ≤ N_max: the certified range is contradicted
  allowed,  ///< a disagreement with L > N_max: beyond the certified range, allowed
};

/// The `horizon --simulate` verdict.
struct SimulationVerdict {
  std::uint64_t L = 0;  ///< the requested L, or N_max by default
  std::uint64_t k = 1;
  std::uint64_t n_max = 0;
  bool within_certified_range = false;  ///< L ≤ N_max
  SimulationOutcome outcome = SimulationOutcome::not_run;
  std::optional<SimulationReport> report;  ///< unset when not run
};

/// The L of the check: `requested`, or N_max by default (the longest length Cor 4.1 covers).
std::uint64_t simulation_length(std::optional<std::uint64_t> requested, std::uint64_t n_max);

/// Runs check_offset_simulation(head, L, options) for L = simulation_length(requested, n_max)
/// when L ≥ head.k and labels the outcome: a disagreement within the certified range
/// (L ≤ n_max) is a bug, beyond it allowed (Cor 4.1 promises nothing there). `head` must carry
/// the C the range was measured with (for C = auto, the C chosen). Throws InvalidArgument
/// like check_offset_simulation.
SimulationVerdict simulate_certified_range(const FixedOffsetSpec& head, std::uint64_t n_max,
                                           std::optional<std::uint64_t> requested,
                                           const SimulationOptions& options = {});

/// The verdict as `horizon --simulate --json` prints it under "simulation": {"L", "note"} when
/// not run (L < k), else {"L", "exhaustive_length", "words", "positions",
/// "within_certified_range", "disagreement": null or {"word", "position", "expected" (bool),
/// "got" (the output coordinate's exact decimal, text)}}.
nlohmann::json to_json(const SimulationVerdict& verdict);

}  // namespace ropesim::proofs
