#pragma once
// One of N parts of a table (`--shard I/N` of the CLI, `shard=(I, N)` of ropesim.sweep): which
// rows a shard holds, and the record a shard file carries so that the parts can be joined into
// the file one run writes (`ropesim merge`, ropesim.dask). Library target ropesim_tables.
#include <cstdint>
#include <optional>
#include <string>

namespace ropesim::io {

/// One of `count` parts of a table of T rows: shard I holds the contiguous rows
/// [floor((I−1)·T/N), floor(I·T/N)) (0-based, in the order of the full table), so the shards
/// differ by at most one row and the cells of a sweep that share work (the realisations and
/// formats of one schedule, evaluated together by attention::census_many) mostly stay in one
/// shard. `index` is 1-based: shards are 1/N … N/N, as a Slurm array `--array=1-N` or GNU
/// parallel's `{#}` number them.
struct Shard {
  std::uint64_t index = 1;  ///< I, in 1..count
  std::uint64_t count = 1;  ///< N ≥ 1

  /// floor(part·T/N) without overflow (part ≤ N ≤ 10^6).
  std::uint64_t boundary(std::uint64_t part, std::uint64_t total) const {
    return part * (total / count) + part * (total % count) / count;
  }
  /// The first row of this shard in a table of `total` rows.
  std::uint64_t first_row(std::uint64_t total) const { return boundary(index - 1, total); }
  /// One past its last row.
  std::uint64_t end_row(std::uint64_t total) const { return boundary(index, total); }
  /// Does row `row` (0-based) of a table of `total` rows belong to this shard?
  bool owns(std::uint64_t row, std::uint64_t total) const {
    return first_row(total) <= row && row < end_row(total);
  }
  /// How many of rows 0..total−1 belong to this shard.
  std::uint64_t rows_of(std::uint64_t total) const { return end_row(total) - first_row(total); }
};

/// The largest N of `--shard I/N`.
inline constexpr std::uint64_t kMaxShards = 1000000;

/// Parses `--shard I/N`: decimal integers with 1 ≤ I ≤ N ≤ 10^6. Throws ropesim::InvalidArgument
/// naming `--shard` and the accepted form for anything else (`0/0`, `3/2`, `a/b`, `2`).
Shard parse_shard(const std::string& text);

/// The shard record of a file written with `--shard` (render() prints it after the
/// provenance): which shard it is, and how many rows the full table has.
struct ShardRecord {
  Shard shard;
  std::uint64_t total_rows = 0;
};

/// The record's text, the same in CSV (after `# `), LaTeX (after `% `) and Markdown:
/// "shard I/N of T rows (rows [A, B) of the table, counted from 0; join the shards with
/// ropesim merge)".
std::string shard_line(const ShardRecord& record);

/// Reads a line written by shard_line (without its comment prefix); nullopt if `line` is not
/// one.
std::optional<ShardRecord> parse_shard_line(const std::string& line);

}  // namespace ropesim::io
