#pragma once
/// Mixed-format attention heads (attention/transformer/head_formats.hpp): the steps of one head
/// with each tensor in its own format, and the IEEE flags each step raises, so that a run can say
/// which step overflowed (pytorch #60939, transformers #17437: q·kᵀ overflows fp16 to inf, then the
/// softmax gives NaN; NUMERIC §4). Also the long-accumulation case: one query against
/// keys of 4096 terms, scores accumulated in an 11-bit accumulator versus promoted into fp32
/// every 128 products, and the softmax weights each gives.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attention/transformer/head_formats.hpp"
#include "attention/transformer/transformer.hpp"
#include "numeric/flags.hpp"

namespace ropesim::attention {

/// One step of a mixed-format head and the IEEE flags (numeric/flags.hpp) its roundings raised,
/// accumulated over every key and coordinate of one query (or of one token, for the stores).
struct StepFlags {
  std::string step;    ///< e.g. "q·k accumulation", "softmax exp" (mixed_head_steps order)
  std::string format;  ///< the format the step rounds into
  numeric::Flags flags;
};

/// The step names in evaluation order: "query store", "key store", "value store",
/// "q·k accumulation", "score store", "score dequantisation", "score scale", "mask",
/// "softmax subtraction", "softmax exp", "softmax sum", "softmax division",
/// "probability store", "value accumulation", "value dequantisation", "output store".
const std::vector<std::string>& mixed_head_steps();

/// x stored into X: rnd_X(x_k / scale) (the exact quotient rounded once, the policy's rounding)
/// or rnd_X(x_k) without a scale (TensorFormat). Raises the roundings' flags into `flags`.
std::vector<Value> store_tensor(std::span<const Value> x, const numeric::Format& format,
                                const std::optional<Value>& scale, const EvaluationPolicy& policy,
                                numeric::Flags& flags);

/// One query of a mixed-format head: scores, weights, output and per-step flags.
struct MixedHeadStep {
  std::vector<Value> scores;     ///< S per key (elements of S, after scale and mask)
  std::vector<Value> weights;    ///< α̃ per key (elements of P, or of Σ)
  std::vector<Value> output;     ///< the head output o (value_dim, elements of F)
  std::vector<StepFlags> steps;  ///< steps 4…16 of mixed_head_steps() (scores onwards)
};

/// Steps 2–7 of HeadFormats for one query. `query` is q̃ (stored, head_dim), keys[j] k̃_j
/// (head_dim), values[j] ṽ_j (value_dim); the first `unmasked` keys are visible, the others
/// get the additive mask (formats.mask must then be set). No key (no mask, nothing visible):
/// empty scores and weights, the zero output (THEORY §2). `variant` must be stable or
/// no-max-subtraction. Throws InvalidArgument on a length mismatch, on masked keys without a
/// mask, or for the online softmax.
MixedHeadStep mixed_head_step(const AttentionHead& head, const HeadFormats& formats,
                              std::span<const Value> query,
                              std::span<const std::vector<Value>> keys,
                              std::span<const std::vector<Value>> values, std::size_t unmasked,
                              const EvaluationPolicy& policy, SoftmaxVariant variant);

/// Checks a head's formats block (positive finite scales, promotion intervals ≥ 1, a mask
/// that is a number) and that the model's softmax variant is modelled; throws InvalidArgument
/// with one line naming `path` (e.g. "layers[0].heads[1].formats.key.scale: must be positive
/// and finite, got -1") and what is accepted.
void check_head_formats(const HeadFormats& formats, SoftmaxVariant variant,
                        const std::string& path);

// ---------------------------------------------------------------------------------------------
// The long accumulation: a 4096-term dot product in an 11-bit accumulator versus promotion into
// fp32
// ---------------------------------------------------------------------------------------------

/// The accumulation case. The query q and the keys k_j have `terms` coordinates, exact bf16
/// values from a 64-bit LCG seeded with `seed` (x ← 6364136223846793005·x +
/// 1442695040888963407 mod 2^64; value ±m·2^(e−7), m = 128 + (x >> 57), e = ((x >> 40) mod 4)
/// − 5, so |value| ∈ [2^-5, 2^-1); sign bit 39 of x: the generator of tests/derivations/
/// accumulator_values.py), drawn q first, then k_1, k_2, …. Key 0 is the needle: k_0 = q.
/// Scores in S = fp32: S_j = rnd_S(rnd_S(acc(q·k_j)) · c) with c = rnd_S(1 / rnd_S(√terms))
/// (1/64 for 4096 terms); the softmax stable in fp32 (HeadFormats steps 2 and 4, through
/// mixed_head_step with an fp32 policy, round-to-nearest-even).
struct AccumulationCase {
  std::size_t terms = 4096;
  std::size_t keys = 8;
  std::uint64_t seed = 20261201;
  /// The accumulators compared; each gives one row of scores and weights.
  std::vector<numeric::AccumulatorModel> accumulators;
};

/// One accumulator's scores and softmax weights (fp32), and the exact scores for reference.
struct AccumulationRow {
  numeric::AccumulatorModel accumulator;
  std::vector<Value> scores;   ///< S_j in fp32
  std::vector<Value> weights;  ///< α_j in fp32
};
struct AccumulationResult {
  std::vector<mpq_class> exact_dots;  ///< q·k_j exactly
  std::vector<AccumulationRow> rows;  ///< one per accumulator, in order
};

/// The work of run_accumulation_case, for check_budget: terms·keys·(accumulators + 1)
/// products (one exact product per term and key, one rounded product and sum per accumulator),
/// and the memory of the query and keys held as Values (terms·(keys + 1) of them) plus the
/// exact products' rationals. The rate is the one measured on the reference machine
/// (5·10^6 products/s).
WorkEstimate accumulation_work(const AccumulationCase& c);

/// Runs the case. Throws InvalidArgument unless 1 ≤ terms ≤ 10^6, 1 ≤ keys ≤ 4096 and at least
/// one accumulator is given.
AccumulationResult run_accumulation_case(const AccumulationCase& c,
                                         const numeric::Engine& engine = numeric::default_engine());

}  // namespace ropesim::attention
