#pragma once
// Reading a model spec's JSON fields with paths (docs/MODEL_SPEC.md): every refusal names the
// field's path ("layers[0].heads[1].W_Q: ..."), numbers are read exactly and rounded once into
// F, and declared sizes are bounded before anything is allocated. Internal to the model spec
// reader (model_spec.cpp); definitions in model_spec_fields.cpp.
#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attention/transformer/model_spec.hpp"
#include "core/error.hpp"

namespace ropesim::attention::spec_fields {

using nlohmann::json;

/// Throws InvalidArgument "<path>: <problem>".
[[noreturn]] void bad(const std::string& path, const std::string& problem);

/// How a JSON value is named in a refusal (ropesim::json_value_text).
std::string type_text(const json& j);

/// The path of member `key` of the object at `path` ("path.key", or "key" at the top).
std::string child(const std::string& path, const std::string& key);

/// The path of element k of the array at `path` ("path[k]").
std::string index(const std::string& path, std::size_t k);

/// Throws (naming `path`) unless j is a JSON object.
void check_object(const json& j, const std::string& path);

/// Rejects keys not in `allowed` (keys starting with '_' and "comment" are ignored); throws
/// unless j is an object.
void check_keys(const json& j, const std::string& path, std::initializer_list<const char*> allowed);

/// The member `key` of object j, or nullptr when absent.
const json* optional_field(const json& j, const char* key);

/// The member `key` of object j; throws "<path>: missing \"key\"" when absent.
const json& required_field(const json& j, const std::string& path, const char* key);

/// A non-negative integer that fits std::size_t; throws naming `path` otherwise.
std::size_t get_size(const json& j, const std::string& path);

/// Limits on the sizes a spec declares (docs/MODEL_SPEC.md "Sizes"): every dimension (d_model,
/// head_dim, value_dim, ffn hidden, unrotated_pairs) and the entries of one matrix. Without
/// them a few bytes ask for more memory than exists ("d_model": 1e11 with "zeros" vectors)
/// or, worse, rows·cols overflows (head_dim 2^63 × d_model 2 is 0 entries, and "identity"
/// then wrote past the end: found by fuzz/fuzz_model_spec).
inline constexpr std::size_t max_dimension = 1'000'000;
inline constexpr std::size_t max_matrix_entries = 10'000'000;

/// A dimension: get_size in [1, max_dimension]; throws naming `path` otherwise.
std::size_t get_dimension(const json& j, const std::string& path);

/// Throws naming `path` when rows × cols exceeds max_matrix_entries.
void check_matrix_size(const std::string& path, std::size_t rows, std::size_t cols);

/// A JSON string; throws naming `path` otherwise.
std::string get_string(const json& j, const std::string& path);

/// A JSON boolean; throws naming `path` otherwise.
bool get_bool(const json& j, const std::string& path);

/// Reads one number exactly (a JSON number, a decimal string like "-2.5e-3", a fraction like
/// "1/3", or "inf"/"-inf") and rounds it once into F.
Value get_value(const json& j, const std::string& path, const Arithmetic& f);

/// A vector of length n: an array of numbers, or "zeros".
std::vector<Value> get_vector(const json& j, const std::string& path, std::size_t n,
                              const Arithmetic& f);

/// The vector member `key` of `parent` (get_vector), or {} when absent or null.
std::vector<Value> optional_vector(const json& parent, const std::string& path, const char* key,
                                   std::size_t n, const Arithmetic& f);

/// A rows × cols matrix: an array of rows, "zeros", "identity" (ones on the diagonal), or
/// {"sparse": [[r, c, value], ...]} (other entries zero).
Matrix get_matrix(const json& j, const std::string& path, std::size_t rows, std::size_t cols,
                  const Arithmetic& f);

/// The matrix member `key` of `parent` (get_matrix), or rows × cols zeros when absent or null.
Matrix optional_matrix(const json& parent, const std::string& path, const char* key,
                       std::size_t rows, std::size_t cols, const Arithmetic& f);

/// A layer norm's {"gain", "bias", "epsilon"} over d coordinates (epsilon 1e-5 by default).
LayerNormParams get_norm(const json& j, const std::string& path, std::size_t d,
                         const Arithmetic& f);

}  // namespace ropesim::attention::spec_fields
