#pragma once
/// Running an F-transformer on a word (THEORY §2): the driver above the core (transformer.hpp)
/// and its extension, the mixed-format heads (mixed_attention.hpp), which it dispatches to for
/// heads with per-tensor formats. The core does not call the extension: run.cpp includes both.
///
/// Nothing here prints; the CLI (`ropesim run`) prints.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/transformer/transformer.hpp"

namespace ropesim::attention {

/// Which positions a run records in its trace.
struct RunOptions {
  /// Positions to trace (BOS = 0 convention). Positions that do not exist are an error.
  std::vector<std::uint64_t> trace_positions;
  bool trace_all = false;  ///< trace every position
};

/// The trace of one head at one query position.
struct HeadTrace {
  std::string name;
  std::vector<Value> query;         ///< q_p (rotated)
  std::vector<std::uint64_t> keys;  ///< visible key positions, increasing
  std::vector<Value> scores;        ///< Ŝ_{p,q} per visible key
  std::vector<Value> weights;       ///< α_{p,q} per visible key
  std::vector<Value> output;        ///< the head's output o_p (value_dim)
};

/// The trace of one position in one layer.
struct PositionTrace {
  std::uint64_t position = 0;
  std::string token;                   ///< "BOS", "EOS" or the symbol
  std::vector<Value> input;            ///< residual stream entering the layer
  std::vector<HeadTrace> heads;        ///< empty when the layer has no heads
  std::vector<Value> attention;        ///< attention sublayer output (before the residual)
  std::vector<Value> after_attention;  ///< residual stream after the attention sublayer
  std::vector<Value> ffn;              ///< FFN output (before the residual); empty without FFN
  std::vector<Value> output;           ///< residual stream leaving the layer
};

/// Where a NaN or an infinity first appeared: embeddings first, then layer by layer (within a
/// layer: position by position, and at one position in the order head scores, head weights,
/// head output, attention, after attention, FFN, output), then the readout and classifier.
struct NonFinite {
  std::string where;                      ///< e.g. "layer 0, position 3, head 0 weights"
  std::string stage;                      ///< "embedding", "scores", "weights", "head output",
                                          ///< "attention", "after attention", "ffn", "output",
                                          ///< "readout", "classifier"
  std::optional<std::size_t> layer;       ///< 0-based layer, when inside a layer
  std::optional<std::uint64_t> position;  ///< position, when at one position
  std::optional<std::size_t> head;        ///< head index, for head stages
};

/// The first step of a mixed-format head (AttentionHead::formats) that raised an IEEE flag:
/// evaluation order is layer, head, position, then the step order of mixed_head_steps()
/// (the stores of the token at that position first).
struct StepException {
  std::string where;   ///< e.g. "layer 0, position 3, head 0"
  std::string step;    ///< e.g. "q·k accumulation" (attention/transformer/mixed_attention.hpp)
  std::string format;  ///< the format the step rounds into, e.g. "fp16"
  std::size_t layer = 0;
  std::uint64_t position = 0;
  std::size_t head = 0;
};

/// Result of a run.
struct RunResult {
  std::vector<std::string> tokens;       ///< per token: "BOS", symbols, "EOS"
  std::vector<std::uint64_t> positions;  ///< position of each token
  std::uint64_t eos_position = 0;        ///< N + 1
  std::vector<Value> readout;            ///< the EOS representation fed to the classifier
  Value output;                          ///< classifier value y
  bool accept = false;                   ///< y > 0
  std::optional<NonFinite> first_non_finite;
  /// True when some head has per-tensor formats: then first_overflow / first_invalid say which
  /// step of those heads first raised the IEEE overflow / invalid flag (pytorch #60939: the
  /// q·k accumulation overflows fp16, then the softmax subtraction inf − inf is invalid).
  bool step_flags = false;
  std::optional<StepException> first_overflow;
  std::optional<StepException> first_invalid;
  /// Traced positions (sorted) and, per layer, one PositionTrace per traced position.
  std::vector<std::uint64_t> traced;
  std::vector<std::vector<Value>> traced_embeddings;  ///< per traced position
  std::vector<std::vector<PositionTrace>> layers;
};

/// Runs the model on `word` (THEORY §2): embeds BOS w EOS (or w EOS), applies every layer to
/// every position, reads out EOS with the classifier. Throws InvalidArgument for symbols not
/// in the alphabet, trace positions that do not exist, or an invalid model (validate()).
RunResult run(const Model& model, std::string_view word, const RunOptions& options = {});

/// The run as JSON (docs/MODEL_SPEC.md, "Run output"): "input", "tokens", "positions",
/// "accept" (bool), "output" (the classifier value: a number when finite, else "inf", "-inf"
/// or "nan"), "output_exact" (exact decimal text), "first_non_finite" (object or null) and,
/// when positions were traced, "trace"; for models with mixed-format heads (step_flags) also
/// "first_overflow" and "first_invalid" (objects {"where", "step", "format", "layer",
/// "position", "head"} or null). Values inside the trace are exact decimal strings
/// (exact_decimal; marked as exact numbers under a numeric::NumberTextMarking). Does not print.
nlohmann::json to_json(const RunResult& result, std::string_view word);

/// What `ropesim run MODEL --json` prints and ropesim.Model.run returns: to_json(result,
/// word) with the model's "model" (its name) and "format" (its F). Values inside the trace and
/// "output_exact" are exact decimals, marked as numbers under a numeric::NumberTextMarking.
nlohmann::json to_json(const Model& model, const RunResult& result, std::string_view word);

}  // namespace ropesim::attention
