#pragma once
/// The residual space of a compiled transformer with named coordinates (THEORY §7 C1; STYLE:
/// Tracr names every residual direction), and exact rational weight matrices assembled over
/// it and rounded once into F.
///
/// A coordinate is a name (`bos`, `top`, `sym:a`, one per subformula `f3:P(a & !P true)`,
/// gadget internals such as `raw:...`, `count`); gadgets read and write coordinates by name,
/// never by index. Weights are built exactly as Eigen matrices over GMP rationals
/// (`ExactMatrix`) and rounded ONCE into F (`round_once`); evaluation in F never uses Eigen
/// (its kernels would reorder the sums THEORY §2.1 fixes): attention::run evaluates the
/// rounded attention::Matrix.
#include <gmpxx.h>

#include <Eigen/Core>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attention/transformer/transformer.hpp"

namespace Eigen {
/// Eigen's scalar traits for exact rationals (storage and block assembly only: no Eigen
/// kernel ever evaluates a model).
template <>
struct NumTraits<mpq_class> : GenericNumTraits<mpq_class> {
  typedef mpq_class Real;
  typedef mpq_class NonInteger;
  typedef mpq_class Nested;
  enum {
    IsInteger = 0,
    IsSigned = 1,
    IsComplex = 0,
    RequireInitialization = 1,
    ReadCost = 6,
    AddCost = 150,
    MulCost = 100
  };
  static inline Real epsilon() { return 0; }
  static inline Real dummy_precision() { return 0; }
  static inline int digits10() { return 0; }
};
}  // namespace Eigen

namespace ropesim::proofs {

/// A matrix of exact rationals (rows × cols), assembled before the one rounding into F.
using ExactMatrix = Eigen::Matrix<mpq_class, Eigen::Dynamic, Eigen::Dynamic>;
/// A column vector of exact rationals.
using ExactVector = Eigen::Matrix<mpq_class, Eigen::Dynamic, 1>;

/// Named coordinates of a residual stream: names ↔ indices 0..size()-1 in creation order.
class ResidualSpace {
 public:
  /// The empty space (d_model 0).
  ResidualSpace() = default;
  /// The space of `names` in this order (index i = the i-th name). Throws InvalidArgument like
  /// add() when a name is empty or repeated.
  ResidualSpace(std::initializer_list<std::string_view> names);
  /// Adds a coordinate and returns its index. Throws InvalidArgument if the name is taken or
  /// empty.
  std::size_t add(std::string_view name);
  /// The index of `name`. Throws InvalidArgument naming the coordinate if it does not exist.
  std::size_t index(std::string_view name) const;
  /// Whether `name` is a coordinate.
  bool contains(std::string_view name) const;
  /// The name of coordinate i (i < size()).
  const std::string& name(std::size_t i) const { return names_.at(i); }
  const std::vector<std::string>& names() const { return names_; }
  /// d_model.
  std::size_t size() const { return names_.size(); }
  /// The unit vector e_name (length size()).
  ExactVector unit(std::string_view name) const;

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::size_t> index_;
};

/// Each entry of `m` rounded once into F under `arithmetic` (its format and rounding).
attention::Matrix round_once(const ExactMatrix& m, const numeric::Arithmetic& arithmetic);
/// Each entry of `v` rounded once into F.
std::vector<numeric::Value> round_once(const ExactVector& v, const numeric::Arithmetic& arithmetic);

}  // namespace ropesim::proofs
