// The F-transformer's vocabulary (THEORY §2): the enum spellings and the matrix of values of F.
// See transformer.hpp for the contracts; the computation lives in softmax.cpp, head.cpp,
// layer.cpp, model_validation.cpp, tokenize.cpp and run.cpp.
#include "attention/transformer.hpp"

#include <string>
#include <string_view>

#include "numeric/error.hpp"

namespace ropesim::attention {

// ---------------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------------

std::string_view to_string(SoftmaxVariant variant) {
  switch (variant) {
    case SoftmaxVariant::stable:
      return "stable";
    case SoftmaxVariant::no_max_subtraction:
      return "no-max-subtraction";
    case SoftmaxVariant::online:
      return "online";
  }
  return "?";
}

SoftmaxVariant parse_softmax_variant(std::string_view text) {
  if (text == "stable") return SoftmaxVariant::stable;
  if (text == "no-max-subtraction" || text == "no_max_subtraction" || text == "no-max") {
    return SoftmaxVariant::no_max_subtraction;
  }
  if (text == "online" || text == "flash") return SoftmaxVariant::online;
  throw InvalidArgument("unknown softmax '" + std::string(text) +
                        "'; accepted: stable, no-max-subtraction, online");
}

std::string_view to_string(NormPlacement placement) {
  return placement == NormPlacement::post ? "post" : "pre";
}

NormPlacement parse_norm_placement(std::string_view text) {
  if (text == "post") return NormPlacement::post;
  if (text == "pre") return NormPlacement::pre;
  throw InvalidArgument("unknown layer norm placement '" + std::string(text) +
                        "'; accepted: post, pre");
}

std::string_view to_string(Masking masking) {
  return masking == Masking::strict ? "strict" : "non-strict";
}

Masking parse_masking(std::string_view text) {
  if (text == "strict") return Masking::strict;
  if (text == "non-strict" || text == "non_strict") return Masking::non_strict;
  throw InvalidArgument("unknown masking '" + std::string(text) +
                        "'; accepted: strict, non-strict");
}

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
