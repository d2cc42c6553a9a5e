#pragma once
/// Looking inside a model, head by head (`ropesim analyse heads`, ropesim.analyse_heads; issue
/// 37 item 3; THEORY §6, "Looking inside a model"): per attention head, the rotary blocks it
/// uses (the per-block norms of q and k, the measure of [RRWG], and each block's share of
/// the q·k score mass), whether it is a positional (fixed-offset) head on the words analysed
/// and, for such a head, the certified range N_max^(k) of its positional component in the
/// model's format (THEORY §6, measured by proofs::certified_range); and the words whose decision
/// in the model's format F differs from the decision in a reference format (fp32) of the same
/// spec, with the first prefix and the first attention position at which the two differ.
///
/// Every run is attention::run / attention::PrefixOracle on the spec loaded once per format
/// (attention::load_model with a format override): the weights are the spec's exact numbers
/// rounded once into each format. Nothing here prints.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attention/transformer/transformer.hpp"
#include "numeric/value.hpp"
#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs {

/// The options as a user spells them (the flags of `ropesim analyse heads`; the keywords of
/// ropesim.analyse_heads). Defaults are the CLI's.
struct HeadAnalysisArguments {
  std::string model_file;                 ///< MODEL: a model spec (docs/MODEL_SPEC.md)
  std::optional<std::string> format;      ///< --format: F of the exact run; none: the spec's own
  std::string reference_format = "fp32";  ///< --reference-format: the format compared with F
  /// --words: the words, separated by commas (a word of several-character symbols separates
  /// them by spaces, as `ropesim run --input`). Exclusive with lengths.
  std::optional<std::string> words;
  /// --lengths: word lengths, a list 8,16,32, a range A..B or both (default 1..16).
  std::optional<std::string> lengths;
  /// --per-length: words per length: every word of that length when there are at most this
  /// many, else this many distinct words drawn uniformly (seeded); 1..10^5.
  std::uint64_t per_length = 16;
  std::uint64_t seed = 1;  ///< --seed of the drawn words
  /// --positional-share: the least share of a head's eligible queries whose unique largest
  /// attention weight sits at the head's offset k for it to count as positional; an exact
  /// decimal in (0, 1].
  std::string positional_share = "0.9";
  /// --max-length: L_max of the certified-range scan; none: scan_length_limit of the head.
  std::optional<std::uint64_t> max_length;
  bool allow_slow = false;  ///< --allow-slow: run beyond the time budget
};

/// The options read and validated (head_analysis_options).
struct HeadAnalysisOptions {
  std::string model_file;
  attention::Model model;      ///< the spec in F
  attention::Model reference;  ///< the same spec in the reference format
  std::vector<std::string> words;
  /// How the words were chosen: "given" (--words) or "lengths".
  std::string word_source = "lengths";
  std::vector<std::uint64_t> lengths;  ///< the lengths asked for (word_source "lengths")
  std::uint64_t per_length = 16;
  std::uint64_t seed = 1;
  mpq_class positional_share = mpq_class(9, 10);
  std::optional<std::uint64_t> max_length;
};

/// Reads the model twice (in F: `format` or the spec's; in `reference_format`, the spec's
/// rounding kept), checks every option and builds the word list (in order of length; each
/// length's words in the alphabet's order when all are taken, else in the order drawn: one
/// std::mt19937_64 per length seeded with seed + length, letters by value modulo |Σ|, repeats
/// drawn again). Refuses a model with mixed-format heads (AttentionHead::formats). Checks the
/// work (the runs of every word in both formats) against numeric::Budget unless allow_slow.
/// Throws InvalidArgument with one line naming the flag: "--words: give either --words or
/// --lengths, not both", "--words: symbol 'c' ...", "--per-length: ...", "--positional-share:
/// '1.5' is not in (0, 1]", "--format: ...", "MODEL: ..." (the spec's own refusal).
HeadAnalysisOptions head_analysis_options(const HeadAnalysisArguments& arguments);

/// One 2-coordinate block of a head: a rotary block of a segment, or one of its unrotated
/// pairs (frequency 0). Norms are Euclidean, computed in binary64 from the values of F
/// (measurements, not exact values).
struct BlockUsage {
  std::size_t segment = 0;              ///< rotary segment (head order)
  std::size_t index = 0;                ///< block index inside the head, 0-based
  std::size_t coordinates[2] = {0, 0};  ///< its two head coordinates (by the pair layout)
  double theta = 0;                     ///< θ_j, radians per position (0: unrotated)
  std::string realisation;              ///< "r1" …, "none" (identity) or "unrotated"
  double query_weight_norm = 0;         ///< Frobenius norm of the block's rows of [Q | b_q]
  double key_weight_norm = 0;           ///< the same of [K | b_k]
  double query_norm = 0;                ///< mean over the analysed tokens of ‖(Q x + b_q)_j‖
  double key_norm = 0;                  ///< mean of ‖(K x + b_k)_j‖
  double score_mass = 0;                ///< Σ over queries and visible keys of |q_j·k_j|
  std::optional<double> score_share;    ///< score_mass / Σ over the blocks (none if 0)
};

/// The fixed-offset test of one head on the analysed words (THEORY §6, "Looking inside a
/// model"): at each query with at least two visible keys, the key with the unique largest
/// attention weight (none on a tie) gives the offset n = query − key; k is the most frequent
/// offset (the smallest on ties); the eligible queries are those with ≥ 2 visible keys among
/// which query − k; the head is positional when at_offset / eligible ≥ the positional share.
struct PositionalTest {
  std::uint64_t queries = 0;           ///< queries with ≥ 2 visible keys
  std::uint64_t tied = 0;              ///< of them, queries whose largest weight is tied
  std::optional<std::int64_t> offset;  ///< k (none: every query tied, or no query)
  std::uint64_t eligible = 0;
  std::uint64_t at_offset = 0;
  bool positional = false;
};

/// The certified range of a positional head's positional component (THEORY §6): the head with
/// Q = K = 0 and the biases b̄_q, b̄_k, the exact means of Q x + b_q and K x + b_k over the
/// analysed tokens each rounded once into F, so that q_i = R̂_i b̄_q and k_j = R̂_j b̄_k; when the
/// head's Q and K are zero (content_independent) that is the head itself, on every word.
struct PositionalRange {
  std::uint64_t k = 1;
  bool content_independent = false;
  std::vector<numeric::Value> query_bias, key_bias;  ///< b̄_q, b̄_k (head_dim values of F)
  CertifiedRange range;  ///< proofs::certified_range (the scan of RoPE-X eq. 10)
};

/// One head's report.
struct HeadReport {
  std::size_t layer = 0, head = 0;
  std::string name;
  std::vector<BlockUsage> blocks;  ///< empty for a NoPE head
  PositionalTest test;
  std::optional<PositionalRange> range;
  /// Why a positional head has no range: k = 0, several rotary segments, an unrealised block,
  /// a multi-axis schedule, f_large(F) undefined (THEORY §1). Empty otherwise.
  std::string range_note;
};

/// The first place two runs of one word (in F and in the reference format) attend differently:
/// the smallest position, then layer, then head, at which the first key with the largest
/// attention weight differs.
struct AttentionDifference {
  std::uint64_t position = 0;  ///< 0-based, BOS = 0
  std::size_t layer = 0, head = 0;
  std::optional<std::uint64_t> key, reference_key;  ///< none: no visible key
};

/// A word the two formats decide differently.
struct Flip {
  std::string word;
  std::uint64_t length = 0;                 ///< symbols
  numeric::Value output, reference_output;  ///< the classifier values y (F, reference)
  bool accept = false, reference_accept = false;
  /// The shortest prefix w_1..w_n (n symbols, 0..length) that the two formats decide
  /// differently (attention::PrefixOracle in each).
  std::uint64_t first_prefix = 0;
  /// Where the two runs of the whole word first attend differently; none when every head's
  /// largest weight is on the same key at every position.
  std::optional<AttentionDifference> first_attention_difference;
};

/// The analysis.
struct HeadAnalysis {
  std::string model_file, model_name;
  std::string format, reference_format, rounding;
  std::vector<std::string> words;
  std::string word_source;
  std::vector<std::uint64_t> lengths;
  std::uint64_t per_length = 0, seed = 0;
  mpq_class positional_share;
  std::vector<HeadReport> heads;  ///< layer by layer, heads in order
  std::uint64_t decisions_compared = 0;
  std::vector<Flip> flips;  ///< in word order
};

/// Runs the analysis (see the file comment and the structs). `progress`, when set, is called
/// with (words done, words) on the calling thread. Throws InvalidArgument for a model the
/// runs refuse (attention::run).
HeadAnalysis analyse_heads(const HeadAnalysisOptions& options,
                           const std::function<void(std::size_t, std::size_t)>& progress = {});

/// What `ropesim analyse heads --json` prints and ropesim.analyse_heads returns: model, file,
/// format, reference_format, rounding, words {count, source, lengths, per_length, seed},
/// positional_share (with positional_share_exact when binary64 cannot hold it), heads (per
/// head: layer, head, name, blocks [{segment, block, coordinates, theta, realisation,
/// query_weight_norm, key_weight_norm, query_norm, key_norm, score_mass, score_share}],
/// queries, tied, offset, eligible, at_offset, offset_share, positional, certified_range
/// (null, or {k, content_independent, n_max, at_limit, max_length, fail_query,
/// fail_competitor, fail_offset, gap (+ gap_exact), target_score, competitor_score,
/// query_bias, key_bias, algorithm}), range_note), decisions {compared, agree, flips} and
/// flips [{word, length, accept, reference_accept, output, output_exact, reference_output,
/// reference_output_exact, first_prefix, first_attention_difference}]. Values of F as
/// numeric::put_value writes them, exact decimals marked (numeric::number_text).
nlohmann::json to_json(const HeadAnalysis& analysis);

}  // namespace ropesim::proofs
