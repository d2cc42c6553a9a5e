// `ropesim table rotations`: the realised rotation table itself, the (cos, sin) of every block
// at positions S..S+N-1, written to .npz, .npy, .csv or .json (THEORY §3; docs/CLI.md). The
// values come from attention::realised_table (the evaluator the census counts); this file only
// lays them out, chunk by chunk, so memory does not grow with N.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <iostream>

#include "attention/census/census.hpp"
#include "attention/census/realised_table.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/npy_zip.hpp"
#include "cli/realisation_options.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "numeric/decimal_text.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

enum class TableFile { npz, npy, csv, json };

TableFile table_file_for(const std::string& path) {
  const auto ends = [&](std::string_view ext) {
    return path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends(".npz")) return TableFile::npz;
  if (ends(".npy")) return TableFile::npy;
  if (ends(".csv")) return TableFile::csv;
  if (ends(".json")) return TableFile::json;
  throw InvalidArgument("--out: '" + path +
                        "' has no accepted extension; accepted: .npz .npy .csv .json");
}

/// A table value as CSV/JSON text: a decimal that reads back as the same double (so the file
/// holds the realised value exactly): in JSON the shortest, in CSV numeric::csv_decimal (the
/// shortest unless pandas' default reader misreads it); "nan", "inf", "-inf" otherwise (quoted
/// in JSON, which has no such numbers).
std::string number_text(double v, bool json) {
  if (std::isnan(v)) return json ? "\"nan\"" : "nan";
  if (std::isinf(v)) return v > 0 ? (json ? "\"inf\"" : "inf") : (json ? "\"-inf\"" : "-inf");
  return json ? fmt::format("{}", v) : numeric::csv_decimal(v);
}

}  // namespace

namespace {

/// Calls its argument with each chunk of the realised table, in order.
using ChunkSource =
    std::function<void(const std::function<void(const attention::RealisedTable&)>&)>;

/// The doubles of `v` as little-endian bytes.
std::string little_endian_doubles(const std::vector<double>& v) {
  std::string s;
  s.reserve(v.size() * 8);
  for (double x : v) s += little_endian_double(x);
  return s;
}

/// The .npz table: cos.npy, sin.npy (n x blocks), positions.npy, provenance.npy.
void write_npz(io::OutputStream& out, std::uint64_t n, std::uint64_t blocks, std::uint64_t start,
               const std::string& prov, const ChunkSource& chunks) {
  ZipStream zip(out);
  for (const char* name : {"cos", "sin"}) {
    const bool is_cos = name[0] == 'c';
    zip.begin(std::string(name) + ".npy");
    zip.write(npy_header("<f8", {n, blocks}));
    chunks([&](const attention::RealisedTable& t) {
      zip.write(little_endian_doubles(is_cos ? t.cos : t.sin));
    });
    zip.end();
  }
  zip.begin("positions.npy");
  zip.write(npy_header("<i8", {n}));
  for (std::uint64_t k = 0; k < n; k += attention::kRealisedTableChunk) {
    std::string s;
    for (std::uint64_t i = k; i < std::min(n, k + attention::kRealisedTableChunk); ++i) {
      std::uint64_t p = start + i;
      for (int b = 0; b < 8; ++b) s += static_cast<char>((p >> (8 * b)) & 0xFF);
    }
    zip.write(s);
  }
  zip.end();
  zip.begin("provenance.npy");
  zip.write(npy_header("<U" + std::to_string(std::max<std::size_t>(1, utf32_length(prov))), {1}));
  zip.write(prov.empty() ? std::string(4, '\0') : utf32le(prov));
  zip.end();
  zip.finish();
}

/// The .json table: the run's parameters, then one row per position (written chunk by chunk).
void write_json_table(io::OutputStream& out, const attention::Schedule& schedule,
                      const attention::Realisation& realisation, const numeric::Format& format,
                      numeric::Rounding mode, std::uint64_t start, std::uint64_t n,
                      const ChunkSource& chunks) {
  const std::uint64_t blocks = schedule.blocks.size();
  nlohmann::json head = {{"provenance", provenance()},
                         {"schedule", schedule.spec},
                         {"realization", realisation.name()},
                         {"format", format.name},
                         {"table_format", realisation.table_format().name},
                         {"rounding", std::string(numeric::to_string(mode))},
                         {"start", start},
                         {"positions", n},
                         {"blocks", blocks}};
  std::string text = head.dump(2);
  text.pop_back();  // the closing brace: the rows follow
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  out.write(text + ",\n  \"rows\": [");
  bool first = true;
  chunks([&](const attention::RealisedTable& t) {
    std::string s;
    for (std::uint64_t k = 0; k < t.positions; ++k) {
      s += first ? "\n    " : ",\n    ";
      first = false;
      s += "{\"position\": " + std::to_string(t.start + k);
      for (const auto* v : {&t.cos, &t.sin}) {
        s += v == &t.cos ? ", \"cos\": [" : ", \"sin\": [";
        for (std::uint64_t d = 0; d < blocks; ++d)
          s += (d ? ", " : "") + number_text((*v)[k * blocks + d], true);
        s += "]";
      }
      s += "}";
    }
    out.write(s);
  });
  out.write("\n  ]\n}\n");
}

struct TableRotationsOptions {
  RealisationArguments realised;
  std::string out;
  std::uint64_t positions = 65536, start = 0;
  unsigned jobs = 0;
  bool allow_slow = false;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_table_rotations_options(CLI::App* table, TableRotationsOptions* o) {
  auto* cmd = table->add_subcommand(
      "rotations",
      "The realised (cos, sin) of every block at positions S..S+N-1, to .npz .npy .csv .json");
  cmd->add_option("--schedule", o->realised.schedule,
                  "Schedule spec or model preset (see docs/CLI.md)")
      ->required();
  add_realisation_options(cmd, o->realised);
  add_integer_option(cmd, "--positions", o->positions, "N: positions S..S+N-1", 1,
                     attention::kMaxCensusPositions)
      ->capture_default_str();
  add_integer_option(cmd, "--start", o->start, "S: the first position (0-based, BOS = 0)", 0,
                     INT64_MAX)
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out,
                  "FILE.npz (arrays cos, sin of shape (N, blocks), positions, provenance), "
                  "FILE.npy (shape (N, blocks, 2): cos, sin), FILE.csv or FILE.json")
      ->required();
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Run even when the estimate exceeds the default budget (10 min, 8 GiB)");
  add_jobs_option(cmd, o->jobs);
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_table_rotations(const CLI::App& /*cmd*/, TableRotationsOptions& o) {
  const TableFile kind = table_file_for(o.out);
  io::check_output_path(o.out, "--out");
  const RealisationPolicy policy = parse_realisation_policy(o.realised);
  const attention::Schedule& schedule = policy.schedule;
  const numeric::Format& format = policy.binding.format;
  const numeric::Rounding mode = policy.binding.rounding;
  const auto realisation = parse_applicable_realisation(o.realised, policy);
  with_context("--realization", [&] {
    attention::check_table_fits_double(realisation);
    return 0;
  });
  const std::uint64_t n = o.positions, start = o.start;
  if (start > attention::kMaxCensusLastPosition - (n - 1)) {
    throw InvalidArgument("--start: the last position S + N - 1 = " + std::to_string(start) +
                          " + " + std::to_string(n - 1) + " exceeds 2^63 - 1; accepted: S <= " +
                          std::to_string(attention::kMaxCensusLastPosition - (n - 1)));
  }
  const std::uint64_t blocks = schedule.blocks.size();
  if (kind == TableFile::npz &&
      2 * n * blocks * 8 + n * 8 + (std::uint64_t{1} << 20) >= (std::uint64_t{1} << 32)) {
    throw InvalidArgument(
        "--positions: a .npz table of " + std::to_string(n) + " positions x " +
        std::to_string(blocks) +
        " blocks exceeds 4 GiB (zip without zip64); accepted: N x blocks < 2^28 for .npz, or "
        "write .npy, .csv or .json");
  }
  check_budget("--positions", attention::realised_table_work(schedule, n, false),
               opt_in_budget(o.allow_slow));
  warn_about_schedule(schedule, start + (n - 1));
  const unsigned threads = jobs_threads(o.jobs);
  const std::string prov = provenance().dump();
  const ChunkSource chunks = [&](const std::function<void(const attention::RealisedTable&)>& use) {
    for (std::uint64_t k = 0; k < n; k += attention::kRealisedTableChunk) {
      use(attention::realised_table(schedule, realisation, start + k,
                                    std::min<std::uint64_t>(attention::kRealisedTableChunk, n - k),
                                    threads));
    }
  };
  io::OutputStream out(o.out, "--out");
  switch (kind) {
    case TableFile::npz:
      write_npz(out, n, blocks, start, prov, chunks);
      break;
    case TableFile::npy: {
      out.write(npy_header("<f8", {n, blocks, 2}));
      chunks([&](const attention::RealisedTable& t) {
        std::string s;
        s.reserve(t.cos.size() * 16);
        for (std::size_t k = 0; k < t.cos.size(); ++k)
          s += little_endian_double(t.cos[k]) + little_endian_double(t.sin[k]);
        out.write(s);
      });
      // numpy.load reads the array's bytes and ignores what follows: the provenance.
      out.write("\n# ropesim provenance: " + prov + "\n");
      break;
    }
    case TableFile::csv: {
      std::string head = "# " + provenance_line() + "\nposition";
      for (const char* name : {"cos", "sin"})
        for (std::uint64_t d = 0; d < blocks; ++d) head += fmt::format(",{}_{}", name, d);
      out.write(head + "\n");
      chunks([&](const attention::RealisedTable& t) {
        std::string s;
        for (std::uint64_t k = 0; k < t.positions; ++k) {
          s += std::to_string(t.start + k);
          for (const auto* v : {&t.cos, &t.sin})
            for (std::uint64_t d = 0; d < blocks; ++d)
              s += "," + number_text((*v)[k * blocks + d], false);
          s += '\n';
        }
        out.write(s);
      });
      break;
    }
    case TableFile::json:
      write_json_table(out, schedule, realisation, format, mode, start, n, chunks);
      break;
  }
  out.commit();
  return 0;
}

}  // namespace

Action add_table_rotations_command(CLI::App* table) {
  auto o = std::make_shared<TableRotationsOptions>();
  CLI::App* cmd = add_table_rotations_options(table, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_table_rotations(*cmd, *o);
  };
}

}  // namespace ropesim::cli
