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

std::string exact_decimal(const Value& v) {
  if (v.is_nan()) return "nan";
  if (v.is_inf()) return v.sign_bit() ? "-inf" : "inf";
  if (v.is_zero()) return v.sign_bit() ? "-0" : "0";
  const mpq_class q = exact_rational(v);
  const bool negative = q < 0;
  mpz_class num = abs(q.get_num());
  const mpz_class den = q.get_den();
  // den = 2^k: q = num·5^k / 10^k.
  const std::size_t k = mpz_sizeinbase(den.get_mpz_t(), 2) - 1;
  mpz_class five_k;
  mpz_ui_pow_ui(five_k.get_mpz_t(), 5, k);
  const mpz_class n = num * five_k;
  std::string digits = n.get_str();
  std::string out;
  long exponent10 = -static_cast<long>(k);  // value = digits · 10^exponent10
  if (k == 0) {
    // An integer: strip trailing zeros into an exponent only when there are many.
    std::size_t zeros = 0;
    while (zeros + 1 < digits.size() && digits[digits.size() - 1 - zeros] == '0') ++zeros;
    if (zeros < 6) {
      out = digits;
    } else {
      digits.resize(digits.size() - zeros);
      exponent10 = static_cast<long>(zeros);
      const long e = static_cast<long>(digits.size()) - 1 + exponent10;
      out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
            std::to_string(e);
    }
  } else {
    const long len = static_cast<long>(digits.size());
    const long leading_zeros = static_cast<long>(k) - len;  // zeros after the point
    if (leading_zeros < 0) {
      out = digits.substr(0, static_cast<std::size_t>(len - static_cast<long>(k))) + "." +
            digits.substr(static_cast<std::size_t>(len - static_cast<long>(k)));
    } else if (leading_zeros <= 5) {
      out = "0." + std::string(static_cast<std::size_t>(leading_zeros), '0') + digits;
    } else {
      const long e = len - 1 + exponent10;
      out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
            std::to_string(e);
    }
  }
  return negative ? "-" + out : out;
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
