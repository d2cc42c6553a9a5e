#pragma once
/// The registry behind check.hpp: each theorem of THEORY §5 with the RapidCheck body that
/// checks it. A body generates its inputs with `*gen` and asserts with RC_ASSERT; it is run by
/// run_property (check.hpp), never directly.
#include <functional>
#include <vector>

#include "properties/check.hpp"

namespace ropesim::properties {

/// One registered property.
struct Theorem {
  PropertyInfo info;
  std::function<void(const CheckOptions&)> body;
};

/// All properties, in the order `ropesim check --property all` runs them.
const std::vector<Theorem>& theorems();

/// Runs one theorem's body under RapidCheck with `options` (run_property does this for the
/// registered ones; tests use it for bodies of their own). Throws like run_property.
PropertyOutcome run_theorem(const Theorem& theorem, const CheckOptions& options,
                            const CheckProgress& progress = {});

}  // namespace ropesim::properties
