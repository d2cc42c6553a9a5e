// The F-transformer's vocabulary (THEORY §2): the enum spellings and the matrix of values of F.
// See transformer.hpp for the contracts; the computation lives in softmax.cpp, head.cpp,
// layer.cpp, model_validation.cpp, tokenize.cpp and run.cpp.
#include "attention/transformer/transformer.hpp"

#include <string>
#include <string_view>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

// ---------------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------------

namespace {

constexpr ropesim::Spelling<SoftmaxVariant> softmax_names[] = {
    {SoftmaxVariant::stable, "stable"},
    {SoftmaxVariant::no_max_subtraction, "no-max-subtraction"},
    {SoftmaxVariant::online, "online"}};
constexpr ropesim::Spelling<SoftmaxVariant> softmax_aliases[] = {
    {SoftmaxVariant::no_max_subtraction, "no_max_subtraction"},
    {SoftmaxVariant::no_max_subtraction, "no-max"},
    {SoftmaxVariant::online, "flash"}};
constexpr ropesim::EnumNames<SoftmaxVariant> softmax_table{.what = "softmax",
                                                           .names = softmax_names,
                                                           .aliases = softmax_aliases,
                                                           .accepted = {},
                                                           .suggest = false,
                                                           .suggestions = {}};

constexpr ropesim::Spelling<NormPlacement> norm_placement_names[] = {{NormPlacement::post, "post"},
                                                                     {NormPlacement::pre, "pre"}};
constexpr ropesim::EnumNames<NormPlacement> norm_placement_table{.what = "layer norm placement",
                                                                 .names = norm_placement_names,
                                                                 .aliases = {},
                                                                 .accepted = {},
                                                                 .suggest = false,
                                                                 .suggestions = {}};

constexpr ropesim::Spelling<Masking> masking_names[] = {{Masking::strict, "strict"},
                                                        {Masking::non_strict, "non-strict"}};
constexpr ropesim::Spelling<Masking> masking_aliases[] = {{Masking::non_strict, "non_strict"}};
constexpr ropesim::EnumNames<Masking> masking_table{.what = "masking",
                                                    .names = masking_names,
                                                    .aliases = masking_aliases,
                                                    .accepted = {},
                                                    .suggest = false,
                                                    .suggestions = {}};

}  // namespace

std::string_view to_string(SoftmaxVariant variant) { return name_of(softmax_table, variant); }

SoftmaxVariant parse_softmax_variant(std::string_view text) {
  return parse_name(softmax_table, text);
}

std::string_view to_string(NormPlacement placement) {
  return name_of(norm_placement_table, placement);
}

NormPlacement parse_norm_placement(std::string_view text) {
  return parse_name(norm_placement_table, text);
}

std::string_view to_string(Masking masking) { return name_of(masking_table, masking); }

Masking parse_masking(std::string_view text) { return parse_name(masking_table, text); }

Matrix Matrix::zeros(std::size_t rows, std::size_t cols) {
  Matrix m;
  if (cols != 0 && rows > m.entries.max_size() / cols) {  // rows·cols would wrap around
    throw InvalidArgument("matrix " + std::to_string(rows) + " x " + std::to_string(cols) +
                          " has more entries than can be stored");
  }
  m.rows = rows;
  m.cols = cols;
  m.entries.assign(rows * cols, Value());
  return m;
}

std::span<const Value> Matrix::row(std::size_t r) const {
  return std::span<const Value>(entries).subspan(r * cols, cols);
}

std::vector<Value> matvec(const Matrix& w, std::span<const Value> x, std::span<const Value> b,
                          const EvaluationPolicy& policy) {
  if (w.entries.size() != w.rows * w.cols) {
    throw InvalidArgument("matvec: matrix " + std::to_string(w.rows) + " x " +
                          std::to_string(w.cols) + " holds " + std::to_string(w.entries.size()) +
                          " entries");
  }
  if (x.size() != w.cols) {
    throw InvalidArgument("matvec: matrix " + std::to_string(w.rows) + " x " +
                          std::to_string(w.cols) + " applied to a vector of length " +
                          std::to_string(x.size()));
  }
  if (!b.empty() && b.size() != w.rows) {
    throw InvalidArgument("matvec: bias of length " + std::to_string(b.size()) + " for " +
                          std::to_string(w.rows) + " rows");
  }
  std::vector<Value> y;
  y.reserve(w.rows);
  for (std::size_t r = 0; r < w.rows; ++r) {
    y.push_back(b.empty() ? dot(w.row(r), x, policy) : affine(w.row(r), x, b[r], policy));
  }
  return y;
}

}  // namespace ropesim::attention
