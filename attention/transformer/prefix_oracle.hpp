#pragma once
/// The prefix-sharing membership oracle: the classifier value of an F-transformer on every
/// prefix w_1..w_n (n = 0..N) of one word, from one causal pass (THEORY §2, §7 "Transformer →
/// logic direction"; the membership oracle of the extraction in proofs/languages/extraction.hpp).
///
/// Why one pass suffices: under causal masking (strict or non-strict) the token at position p
/// sees only positions ≤ p, so the states of BOS and of w_1..w_n in every layer are the same in
/// run(model, w_1..w_n) as in run(model, w) — they do not depend on what follows. Only the EOS
/// token differs between prefixes: for the prefix of length n it sits at position n + 1 and
/// sees BOS, w_1..w_n (and itself under non-strict masking). So the symbol tokens go through
/// the layers once, their keys and values cached per layer and head, and then one EOS query per
/// prefix goes through the layers against the cached keys. Every step is the one run() applies
/// (attention/transformer/transformer.hpp, "One token through one layer"), so the classifier values
/// are bit-identical to run(model, w_1..w_n).output.
///
/// Work: run() on every prefix costs Σ_n O((n+2)²) score evaluations per head; this costs
/// O(N²) in all (each EOS query scores n + 1 keys).
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "attention/transformer/transformer.hpp"

namespace ropesim::attention {

/// The classifier on every prefix of one word.
struct PrefixRun {
  /// outputs[n]: the classifier value y on w_1..w_n (n = 0..N; outputs[0] is the empty word).
  std::vector<Value> outputs;
  /// accept[n] = outputs[n] > 0 (NaN rejects), as RunResult::accept.
  std::vector<bool> accept;
};

/// A model prepared for prefix queries: validated once, with the realised rotations of every
/// head cached (re-realised when a longer word needs more positions). Not thread-safe (the
/// rotation cache is mutable); use one oracle per thread.
class PrefixOracle {
 public:
  /// Validates `model` (Model::validate; throws InvalidArgument as it does) and keeps a copy.
  /// Throws InvalidArgument naming the head for a head with per-tensor formats
  /// (AttentionHead::formats: simulated by run() only).
  explicit PrefixOracle(Model model);

  const Model& model() const { return model_; }

  /// The classifier on every prefix of the word whose symbols are `letters` (indices into
  /// model().embedding.alphabet). Throws InvalidArgument for an index ≥ the alphabet size.
  PrefixRun run(std::span<const std::size_t> letters) const;
  /// The same for a word as text, split as tokenize() splits it (throws InvalidArgument for a
  /// symbol not in the alphabet).
  PrefixRun run(std::string_view word) const;

  /// The classifier value y on the whole word only: run(letters).outputs.back(), bit for bit,
  /// with one EOS query instead of N + 1 (about half the work of run() for a long word: the
  /// symbol tokens' causal pass remains). For callers that need one length per word (the
  /// balanced words of proofs/experiments/length_experiment.hpp). Throws InvalidArgument as run()
  /// does.
  Value output(std::span<const std::size_t> letters) const;
  /// The same for a word as text (split as tokenize() splits it).
  Value output(std::string_view word) const;

 private:
  /// The letters of `word` as indices into the model's alphabet (throws as tokenize()).
  std::vector<std::size_t> indices(std::string_view word) const;
  /// run() for the prefixes of length shortest..N only (outputs[0] is that of length
  /// `shortest`; shortest ≤ N).
  PrefixRun run_from(std::span<const std::size_t> letters, std::size_t shortest) const;

  const HeadRotations& rotations(std::size_t layer, std::size_t head,
                                 std::uint64_t positions) const;

  Model model_;
  std::vector<Matrix> stacked_;                                ///< stacked_output_matrix per layer
  mutable std::vector<std::vector<HeadRotations>> rotations_;  ///< [layer][head]
};

/// For every n = 0..N, whether `model` accepts w_1..w_n: equal to run(model, w_1..w_n).accept
/// for each n, computed in one causal pass (see the file comment). Throws InvalidArgument as
/// run() does (invalid model, symbol not in the alphabet).
std::vector<bool> accepts_prefixes(const Model& model, std::string_view word);

}  // namespace ropesim::attention
