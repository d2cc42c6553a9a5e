#pragma once
/// The model spec file (JSON, schema version 1; docs/MODEL_SPEC.md): save and load an
/// F-transformer — format, evaluation policy, architecture options, schedules, per-block
/// realisations and weights.
///
/// Numbers in a spec (weights, biases, ε, scales) are exact: a JSON number is read from its
/// source text, a JSON string may hold a decimal ("0.1", "-2.5e-3"), a fraction ("1/3") or
/// "inf"/"-inf"; each is parsed exactly and rounded once into F with the policy's rounding.
/// Saving writes every value as its exact decimal (transformer.hpp exact_decimal), so loading
/// a saved model reproduces it bit for bit. Malformed specs throw ropesim::InvalidArgument
/// with one line naming the JSON path (e.g. `layers[0].heads[1].query[2][0]`) and what is
/// accepted there.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "attention/transformer/transformer.hpp"
#include "core/budget.hpp"

namespace ropesim::attention {

/// The schema version this build reads and writes.
inline constexpr int model_spec_version = 1;

/// Overrides applied while loading (before any number is rounded into F).
struct ModelLoadOptions {
  std::optional<Format> format;      ///< replaces policy.format
  std::optional<Rounding> rounding;  ///< replaces policy.rounding
  /// policy.engine (nullptr = numeric::default_engine()); the realisations are parsed with it
  /// too, so one engine runs the whole model. Engines give the same bits (NUMERIC §2).
  const numeric::Engine* engine = nullptr;
  /// The most numbers (matrix and vector entries) a spec may declare: larger models are
  /// refused before allocation with the estimate (default 2^24, a few hundred MiB). SIZE_MAX
  /// lifts it; the hard limits per dimension (10^6) and per matrix (10^7 entries) remain.
  std::size_t max_parameters = kMaxModelNumbers;
};

/// The count of numbers that load_model compares with ModelLoadOptions::max_parameters (an
/// upper estimate of the entries of every matrix and vector): d·(3 + symbols) + 5d per layer
/// (attention bias, two norms) + per head 2·head_dim·(d+1) + value_dim·(2d+1) + per FFN
/// hidden·(2d+1) + d.
double spec_number_count(const ModelShape& shape);

/// Bytes that every spec of this shape written by model_to_json(...).dump(2) takes at least,
/// counting only the layers' dense matrices (query, key: head_dim rows of d; value: value_dim
/// rows of d; output: d rows of value_dim; w1: hidden rows of d; w2: d rows of hidden): dump(2)
/// writes every entry on its own line at an indent of at least 12 spaces as a quoted decimal of
/// at least one digit (≥ 16 bytes: `"0"` and the newline), and opens and closes every row on
/// lines of their own at an indent of at least 10 (≥ 24 bytes per row). Used to refuse a model
/// before it is built; the exact size is known only once the text is written.
double spec_min_bytes(const ModelShape& shape);

/// Throws BudgetExceeded "{what}: its model would have d_model …, … layers, about … numbers and a
/// spec of at least …; accepted: models that ropesim run reads (at most … numbers and a … spec)"
/// when spec_number_count(shape) > max_numbers or spec_min_bytes(shape) > max_bytes: for a
/// command about to build a model that `ropesim run` would refuse to load.
void check_model_budget(const std::string& what, const ModelShape& shape,
                        double max_numbers = kMaxModelNumbers,
                        double max_bytes = kMaxInputFileBytes);

/// The deepest nesting of JSON objects/arrays a model spec may have (deeper input is refused
/// while parsing: one line, no stack overflow).
inline constexpr std::size_t max_model_spec_depth = 64;

/// Parses spec text. JSON numbers are taken exactly from their source text.
/// Throws InvalidArgument (one line, naming the path) for malformed JSON, a missing or unknown
/// field, a wrong type, a bad format/schedule/realisation spelling, or a shape mismatch.
Model parse_model(std::string_view text, const ModelLoadOptions& options = {});

/// Builds a model from already-parsed JSON. JSON numbers that nlohmann stored as doubles are
/// taken as their exact double value (use parse_model for exact decimal numbers); strings are
/// parsed exactly. Throws like parse_model.
Model model_from_json(const nlohmann::json& spec, const ModelLoadOptions& options = {});

/// Reads and parses a spec file. Throws InvalidArgument naming the file if it cannot be read,
/// and like parse_model otherwise, with the message prefixed by the file name
/// ("model.json: layers[0].heads[0].query: ...").
Model load_model(const std::filesystem::path& path, const ModelLoadOptions& options = {});

/// The spec of a model (schema version 1; every value as an exact decimal string, matrices
/// dense). model_from_json(model_to_json(m)) reproduces m bit for bit.
/// Throws InvalidArgument if the model is invalid (Model::validate()).
nlohmann::json model_to_json(const Model& model);

/// Writes model_to_json(model) (indented) to `path`, atomically (a temporary file renamed into
/// place). Throws InvalidArgument naming the file if it cannot be written.
void save_model(const Model& model, const std::filesystem::path& path);

}  // namespace ropesim::attention
