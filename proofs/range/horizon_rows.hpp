#pragma once
/// The rows of `ropesim table horizon` (docs/tables/horizon.md): one horizon report
/// (proofs/range/horizon.hpp, THEORY §6) per cell of the grid formats × heads (g or schedules) × k
/// × C × realisations, validated cell by cell before any is measured, then measured on threads.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "proofs/range/horizon.hpp"
#include "proofs/range/horizon_spec.hpp"

namespace ropesim::proofs {

/// The grid: every list non-empty (heads: `gs`, or `schedules` when it is not empty).
struct HorizonGrid {
  HorizonArguments head;  ///< the arguments shared by every cell (rounding, engine, ...)
  std::vector<std::string> formats, gs, schedules, ks, Cs, realisations;
};

/// The HorizonSpec of every cell in table order (format, head, k, C, realisation; the last
/// varying fastest), each validated by horizon_spec. Throws InvalidArgument for an empty grid
/// ("table horizon: the grid is empty (...)") and for a bad cell, with horizon_spec's line
/// naming the list flag ("--formats: ...", "--realizations: ...", "--schedules: ...").
std::vector<HorizonSpec> horizon_grid_specs(const HorizonGrid& grid);

/// Progress of horizon_rows: (rows done, rows total, the row just measured). Called from the
/// calling thread only (numeric::parallel_for).
using HorizonRowsProgress =
    std::function<void(std::size_t done, std::size_t total, const HorizonReport& row)>;

/// horizon(specs[i]) for every i, in order, on `threads` threads (≥ 1): the rows run in
/// parallel, each row's candidates C on the threads left over when there are fewer rows than
/// threads (HorizonSpec::threads is set to that share). The reports do not depend on `threads`.
std::vector<HorizonReport> horizon_rows(std::vector<HorizonSpec> specs, unsigned threads,
                                        const HorizonRowsProgress& progress = {});

}  // namespace ropesim::proofs
