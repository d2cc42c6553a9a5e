#pragma once
/// The realised rotation table itself (THEORY §3): the (cos, sin) of every rotary block at
/// every position of a window S..S+N-1, as binary64 numbers, for `ropesim table rotations` and
/// the Python module's rotation_table. The census (attention/census/census.hpp) counts these rows;
/// this file hands them out.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/budget.hpp"

namespace ropesim::attention {

/// The realised (cos, sin) of positions start..start+positions-1, every block: row k is
/// position start + k (on a multi-axis schedule the tuple (i, ..., i), as realise() reads a
/// scalar position). Values are the table-format elements realise() gives, held exactly in
/// binary64 (the table format fits a double: check_table_fits_double).
struct RealisedTable {
  std::uint64_t start = 0;      ///< S, 0-based (BOS = 0)
  std::uint64_t positions = 0;  ///< N
  std::size_t blocks = 0;       ///< B = schedule.blocks.size() (unrotated pairs are not stored)
  /// Row-major N × B: cos[k·B + d] is block d at position S + k (dimensionless, in [-1, 1]
  /// unless a pipeline's attention factor scales it; ±inf or NaN where a step overflowed or
  /// produced NaN).
  std::vector<double> cos, sin;
  /// Per position: the OR of its blocks' numeric::Flags bits (overflow 1, invalid = NaN 2).
  std::vector<std::uint8_t> flags;
};

/// Throws InvalidArgument (one line naming the format) unless every element of r's table
/// format is a binary64 number (Format::fits_double: precision ≤ 53 and an exponent range
/// inside binary64's), so that the table's doubles are the realised values bit for bit.
void check_table_fits_double(const Realisation& r);

/// The realised table of `s` under `r` over S..S+N-1 (S = start, N = positions ≥ 0), computed
/// block by block with realise_block (the evaluator the census uses) on `threads` threads
/// (≥ 1; the result does not depend on it). Memory: 17·N·B bytes for the result. Throws
/// InvalidArgument when r does not apply to s (check_applicable), the table format does not
/// fit a double (check_table_fits_double), S + N - 1 exceeds 2^63 - 1, or threads = 0.
RealisedTable realised_table(const Schedule& s, const Realisation& r, std::uint64_t start,
                             std::uint64_t positions, unsigned threads = 1);

/// The work of realised_table over N positions, in realised (position, block) pairs, for
/// check_budget: the census' one-thread rate (census_work), and 17 bytes a pair of memory
/// when the whole table is kept (`whole` = true, Python), 17 bytes a pair of one chunk of
/// kRealisedTableChunk positions otherwise (streamed files).
WorkEstimate realised_table_work(const Schedule& s, std::uint64_t positions, bool whole);

/// Positions per chunk when a table is streamed to a file (`ropesim table rotations`): memory
/// stays about 17·B·kRealisedTableChunk bytes whatever N is.
inline constexpr std::uint64_t kRealisedTableChunk = 8192;

}  // namespace ropesim::attention
