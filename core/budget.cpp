// Resource budgets (see budget.hpp).
#include "core/budget.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ropesim {

std::string duration_text(double seconds) {
  if (!(seconds < 1e300)) return "forever";
  if (seconds < 90) return fmt::format("{:.2g} s", seconds);
  if (seconds < 5400) return fmt::format("{:.2g} min", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.2g} h", seconds / 3600);
  if (seconds < 3.15e7 * 2) return fmt::format("{:.2g} days", seconds / 86400);
  return fmt::format("{:.2g} years", seconds / 3.15576e7);
}

std::string size_text(double bytes) {
  if (!(bytes < 1e300)) return "unbounded bytes";
  if (bytes < 1024) return fmt::format("{:.0f} bytes", bytes);
  if (bytes < 1024.0 * 1024) return fmt::format("{:.3g} KiB", bytes / 1024);
  if (bytes < 1024.0 * 1024 * 1024) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024));
  if (bytes < 1024.0 * 1024 * 1024 * 1024 * 1024)
    return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024));
  return fmt::format("{:.2g} bytes", bytes);
}

void check_budget(const std::string& flag, const WorkEstimate& e, const Budget& budget,
                  const std::string& opt_in) {
  const std::string prefix = flag.empty() ? std::string() : flag + ": ";
  constexpr double hard_bytes = 1125899906842624.0;  // 2^50: no machine has it
  if (e.bytes > hard_bytes) {
    throw BudgetExceeded(
        fmt::format("{}this needs about {:.3g} bytes of memory for {:.3g} {}; reduce the sizes",
                    prefix, e.bytes, e.units, e.what));
  }
  if (budget.unlimited) return;
  const double seconds = e.units / e.units_per_second;
  if (e.bytes > budget.bytes) {
    throw BudgetExceeded(fmt::format(
        "{}this needs about {:.3g} GiB of memory ({:.3g} {}), beyond the default budget of {:.3g} "
        "GiB; "
        "reduce the sizes or pass {}",
        prefix, e.bytes / 1073741824.0, e.units, e.what, budget.bytes / 1073741824.0, opt_in));
  }
  if (!(seconds <= budget.seconds)) {
    throw BudgetExceeded(fmt::format(
        "{}this needs about {:.3g} {} (about {} at {:.2g}/s), beyond the default budget of {}; "
        "reduce it or pass {}",
        prefix, e.units, e.what, duration_text(seconds), e.units_per_second,
        duration_text(budget.seconds), opt_in));
  }
}

}  // namespace ropesim
