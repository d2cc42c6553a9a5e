#include "proofs/common/residual_space.hpp"

#include "core/error.hpp"

namespace ropesim::proofs {

ResidualSpace::ResidualSpace(std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) add(name);
}

std::size_t ResidualSpace::add(std::string_view name) {
  if (name.empty()) throw InvalidArgument("a residual coordinate needs a name");
  const std::string key(name);
  if (index_.count(key) != 0)
    throw InvalidArgument("residual coordinate '" + key + "' exists already");
  index_.emplace(key, names_.size());
  names_.push_back(key);
  return names_.size() - 1;
}

std::size_t ResidualSpace::index(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  if (it == index_.end())
    throw InvalidArgument("no residual coordinate named '" + std::string(name) + "'");
  return it->second;
}

bool ResidualSpace::contains(std::string_view name) const {
  return index_.count(std::string(name)) != 0;
}

ExactVector ResidualSpace::unit(std::string_view name) const {
  ExactVector v = ExactVector::Zero(static_cast<Eigen::Index>(size()));
  v(static_cast<Eigen::Index>(index(name))) = 1;
  return v;
}

attention::Matrix round_once(const ExactMatrix& m, const numeric::Arithmetic& arithmetic) {
  attention::Matrix out = attention::Matrix::zeros(static_cast<std::size_t>(m.rows()),
                                                   static_cast<std::size_t>(m.cols()));
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      out.at(static_cast<std::size_t>(r), static_cast<std::size_t>(c)) =
          arithmetic.from_rational(m(r, c));
    }
  }
  return out;
}

std::vector<numeric::Value> round_once(const ExactVector& v,
                                       const numeric::Arithmetic& arithmetic) {
  std::vector<numeric::Value> out;
  out.reserve(static_cast<std::size_t>(v.size()));
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(arithmetic.from_rational(v(i)));
  return out;
}

}  // namespace ropesim::proofs
