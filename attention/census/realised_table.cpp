// The realised rotation table (attention/census/realised_table.hpp).
#include "attention/census/realised_table.hpp"

#include <algorithm>
#include <string>

#include "attention/census/census.hpp"
#include "core/error.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::attention {

void check_table_fits_double(const Realisation& r) {
  const Format& f = r.table_format();
  if (!f.fits_double()) {
    throw InvalidArgument("the table format " + f.name +
                          " has elements a binary64 number cannot hold (precision " +
                          std::to_string(f.precision) +
                          " bits); accepted: table formats of at most 53 bits inside binary64's "
                          "exponent range (fp64, fp32, tf32, fp16, bf16, fp8, p=P,e=E with "
                          "P <= 53, E <= 11)");
  }
}

RealisedTable realised_table(const Schedule& s, const Realisation& r, std::uint64_t start,
                             std::uint64_t positions, unsigned threads) {
  check_applicable(s, r);
  check_table_fits_double(r);
  if (threads == 0) throw InvalidArgument("realised_table: threads must be at least 1");
  if (positions > 0 && start > kMaxCensusLastPosition - (positions - 1)) {
    throw InvalidArgument("the last position S + N - 1 = " + std::to_string(start) + " + " +
                          std::to_string(positions - 1) + " exceeds 2^63 - 1; accepted: S <= " +
                          std::to_string(kMaxCensusLastPosition - (positions - 1)));
  }
  RealisedTable t;
  t.start = start;
  t.positions = positions;
  t.blocks = s.blocks.size();
  const std::size_t n = static_cast<std::size_t>(positions), nb = t.blocks;
  t.cos.assign(n * nb, 0.0);
  t.sin.assign(n * nb, 0.0);
  t.flags.assign(n, 0);
  if (n == 0 || nb == 0) return t;
  std::vector<std::vector<std::uint8_t>> block_flags(nb);
  numeric::parallel_for(std::min<unsigned>(threads, static_cast<unsigned>(nb)), nb,
                        [&](std::size_t d) {
                          const auto pairs = realise_block(s, r, d, start, start + positions);
                          auto& flags = block_flags[d];
                          flags.resize(n);
                          for (std::size_t k = 0; k < n; ++k) {
                            // exact: the table format fits a double (checked above)
                            t.cos[k * nb + d] = pairs[k].cos.to_double();
                            t.sin[k * nb + d] = pairs[k].sin.to_double();
                            flags[k] = pairs[k].flags;
                          }
                        });
  for (std::size_t d = 0; d < nb; ++d)
    for (std::size_t k = 0; k < n; ++k) t.flags[k] |= block_flags[d][k];
  return t;
}

WorkEstimate realised_table_work(const Schedule& s, std::uint64_t positions, bool whole) {
  CensusOptions options;
  options.positions = positions;
  WorkEstimate e = census_work(s, options);
  const double blocks = static_cast<double>(std::max<std::size_t>(1, s.blocks.size()));
  const double kept =
      whole ? static_cast<double>(positions)
            : static_cast<double>(std::min<std::uint64_t>(positions, kRealisedTableChunk));
  e.bytes = kept * blocks * 17;
  return e;
}

}  // namespace ropesim::attention
