// Shards of a table (io/shard.hpp).
#include "io/shard.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace ropesim::io {

namespace {

std::optional<std::uint64_t> small_decimal(const std::string& text) {
  if (text.empty() || text.size() > 7 ||
      !std::all_of(text.begin(), text.end(),
                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return std::nullopt;
  }
  return std::stoull(text);
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const std::string accepted =
      "accepted: I/N with integers 1 <= I <= N <= 1000000, e.g. 2/4 (shard I holds the I-th of N "
      "contiguous blocks of rows)";
  const std::size_t slash = text.find('/');
  const auto index =
      slash == std::string::npos ? std::nullopt : small_decimal(text.substr(0, slash));
  const auto count =
      slash == std::string::npos ? std::nullopt : small_decimal(text.substr(slash + 1));
  if (!index || !count) throw InvalidArgument("--shard: '" + text + "' is not I/N; " + accepted);
  if (*count < 1 || *count > kMaxShards) {
    throw InvalidArgument("--shard: '" + text + "' has N = " + std::to_string(*count) +
                          " shards; " + accepted);
  }
  if (*index < 1 || *index > *count) {
    throw InvalidArgument("--shard: '" + text + "' has I = " + std::to_string(*index) +
                          " outside 1.." + std::to_string(*count) + "; " + accepted);
  }
  return Shard{*index, *count};
}

std::string shard_line(const ShardRecord& r) {
  return "shard " + std::to_string(r.shard.index) + "/" + std::to_string(r.shard.count) + " of " +
         std::to_string(r.total_rows) + " rows (rows [" +
         std::to_string(r.shard.first_row(r.total_rows)) + ", " +
         std::to_string(r.shard.end_row(r.total_rows)) +
         ") of the table, counted from 0; join the shards with ropesim merge)";
}

std::optional<ShardRecord> parse_shard_line(const std::string& line) {
  // "shard I/N of T rows (...)": read the three numbers, then check the line is exactly ours.
  if (line.rfind("shard ", 0) != 0) return std::nullopt;
  const std::size_t slash = line.find('/', 6);
  const std::size_t of = line.find(" of ", 6);
  const std::size_t rows = line.find(" rows (", 6);
  if (slash == std::string::npos || of == std::string::npos || rows == std::string::npos ||
      !(slash < of && of < rows)) {
    return std::nullopt;
  }
  const auto index = small_decimal(line.substr(6, slash - 6));
  const auto count = small_decimal(line.substr(slash + 1, of - slash - 1));
  const std::string total_text = line.substr(of + 4, rows - of - 4);
  if (!index || !count || *count < 1 || *count > kMaxShards || *index < 1 || *index > *count ||
      total_text.empty() || total_text.size() > 19 ||
      !std::all_of(total_text.begin(), total_text.end(),
                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return std::nullopt;
  }
  ShardRecord r{Shard{*index, *count}, std::stoull(total_text)};
  if (shard_line(r) != line) return std::nullopt;
  return r;
}

}  // namespace ropesim::io
