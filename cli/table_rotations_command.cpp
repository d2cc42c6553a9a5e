// `ropesim table rotations`: the realised rotation table itself, the (cos, sin) of every block
// at positions S..S+N-1, written to .npz, .npy, .csv or .json (THEORY §3; docs/CLI.md). The
// values come from attention::realised_table (the evaluator the census counts); this file only
// lays them out, chunk by chunk, so memory does not grow with N.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <iostream>

#include "attention/census.hpp"
#include "attention/realised_table.hpp"
#include "cli/commands.hpp"
#include "cli/jobs.hpp"
#include "cli/realisation_options.hpp"
#include "cli/table.hpp"
#include "io/files.hpp"
#include "numeric/decimal_text.hpp"
#include "numeric/error.hpp"
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

/// CRC-32 (ISO-HDLC, the zip checksum), updated over `bytes`.
std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (unsigned char b : bytes) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void put16(std::string& s, std::uint32_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}

/// A .npy header (format version 1.0, numpy.lib.format): magic, header length, the header
/// dict padded with spaces to a multiple of 64 bytes, ending in '\n'.
std::string npy_header(const std::string& descr, const std::vector<std::uint64_t>& shape) {
  std::string dims;  // "N, B" as "N,B"; a 1-tuple needs its comma: "N,"
  for (std::size_t k = 0; k < shape.size(); ++k)
    dims += std::to_string(shape[k]) + (shape.size() == 1 || k + 1 < shape.size() ? "," : "");
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  std::string h = std::string("\x93NUMPY\x01\x00", 8);
  const std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  put16(h, static_cast<std::uint32_t>(dict.size()));
  return h + dict;
}

std::string little_endian_double(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  std::string s(8, '\0');
  for (int k = 0; k < 8; ++k) s[k] = static_cast<char>((bits >> (8 * k)) & 0xFF);
  return s;
}

/// UTF-32LE code units of UTF-8 `text` (invalid bytes become U+FFFD), for a numpy '<U' array.
std::string utf32le(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::uint32_t cp = 0xFFFD;
    std::size_t len = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c >> 5) == 0x6 || (c >> 4) == 0xE || (c >> 3) == 0x1E) {
      len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
      cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
      bool ok = i + len <= text.size();
      for (std::size_t k = 1; ok && k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        ok = (cc >> 6) == 0x2;
        cp = (cp << 6) | (cc & 0x3F);
      }
      if (!ok) {
        cp = 0xFFFD;
        len = 1;
      }
    }
    put32(out, cp);
    i += len;
  }
  return out;
}

/// Number of code points of utf32le(text).
std::size_t utf32_length(std::string_view text) { return utf32le(text).size() / 4; }

/// A zip archive of stored (uncompressed) members written as a stream: each member's local
/// header carries general purpose bit 3 and its CRC and sizes follow the data in a data
/// descriptor (APPNOTE 4.3.9), so nothing is seeked back. No zip64: every offset and size
/// must stay below 2^32 (checked by the caller before writing).
class ZipStream {
 public:
  explicit ZipStream(io::OutputStream& out) : out_(out) {}
  void begin(const std::string& name) {
    Entry e{name, static_cast<std::uint32_t>(out_.size()), 0, 0};
    std::string h;
    put32(h, 0x04034b50);
    put16(h, 20);      // version needed: 2.0
    put16(h, 0x0008);  // bit 3: sizes and CRC in the data descriptor
    put16(h, 0);       // stored
    put16(h, 0);       // time 00:00
    put16(h, 0x21);    // date 1980-01-01
    put32(h, 0);
    put32(h, 0);
    put32(h, 0);
    put16(h, static_cast<std::uint32_t>(name.size()));
    put16(h, 0);
    h += name;
    out_.write(h);
    entries_.push_back(e);
  }
  void write(std::string_view bytes) {
    Entry& e = entries_.back();
    e.crc = crc32_update(e.crc, bytes);
    e.size += static_cast<std::uint32_t>(bytes.size());
    out_.write(bytes);
  }
  void end() {
    const Entry& e = entries_.back();
    std::string d;
    put32(d, 0x08074b50);
    put32(d, e.crc);
    put32(d, e.size);
    put32(d, e.size);
    out_.write(d);
  }
  void finish() {
    const auto cd_offset = static_cast<std::uint32_t>(out_.size());
    std::string cd;
    for (const Entry& e : entries_) {
      put32(cd, 0x02014b50);
      put16(cd, 20);
      put16(cd, 20);
      put16(cd, 0x0008);
      put16(cd, 0);
      put16(cd, 0);
      put16(cd, 0x21);
      put32(cd, e.crc);
      put32(cd, e.size);
      put32(cd, e.size);
      put16(cd, static_cast<std::uint32_t>(e.name.size()));
      put16(cd, 0);
      put16(cd, 0);
      put16(cd, 0);
      put16(cd, 0);
      put32(cd, 0);
      put32(cd, e.offset);
      cd += e.name;
    }
    std::string eocd;
    put32(eocd, 0x06054b50);
    put16(eocd, 0);
    put16(eocd, 0);
    put16(eocd, static_cast<std::uint32_t>(entries_.size()));
    put16(eocd, static_cast<std::uint32_t>(entries_.size()));
    put32(eocd, static_cast<std::uint32_t>(cd.size()));
    put32(eocd, cd_offset);
    put16(eocd, 0);
    out_.write(cd + eocd);
  }

 private:
  struct Entry {
    std::string name;
    std::uint32_t offset, crc, size;
  };
  io::OutputStream& out_;
  std::vector<Entry> entries_;
};

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

Action add_table_rotations_command(CLI::App* table) {
  struct Options {
    RealisationArguments realised;
    std::string out;
    std::uint64_t positions = 65536, start = 0;
    unsigned jobs = 0;
    bool allow_slow = false;
  };
  auto o = std::make_shared<Options>();
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
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    const TableFile kind = table_file_for(o->out);
    io::check_output_path(o->out, "--out");
    const RealisationPolicy policy = parse_realisation_policy(o->realised);
    const attention::Schedule& schedule = policy.schedule;
    const numeric::Format& format = policy.binding.format;
    const numeric::Rounding mode = policy.binding.rounding;
    const auto realisation = parse_applicable_realisation(o->realised, policy);
    with_context("--realization", [&] {
      attention::check_table_fits_double(realisation);
      return 0;
    });
    const std::uint64_t n = o->positions, start = o->start;
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
                 opt_in_budget(o->allow_slow));
    warn_about_schedule(schedule, start + (n - 1));
    const unsigned threads = jobs_threads(o->jobs);
    const std::string prov = provenance().dump();
    const auto chunks = [&](const std::function<void(const attention::RealisedTable&)>& use) {
      for (std::uint64_t k = 0; k < n; k += attention::kRealisedTableChunk) {
        use(attention::realised_table(
            schedule, realisation, start + k,
            std::min<std::uint64_t>(attention::kRealisedTableChunk, n - k), threads));
      }
    };
    const auto doubles = [](const std::vector<double>& v) {
      std::string s;
      s.reserve(v.size() * 8);
      for (double x : v) s += little_endian_double(x);
      return s;
    };
    io::OutputStream out(o->out, "--out");
    switch (kind) {
      case TableFile::npz: {
        ZipStream zip(out);
        for (const char* name : {"cos", "sin"}) {
          const bool is_cos = name[0] == 'c';
          zip.begin(std::string(name) + ".npy");
          zip.write(npy_header("<f8", {n, blocks}));
          chunks([&](const attention::RealisedTable& t) {
            zip.write(doubles(is_cos ? t.cos : t.sin));
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
        zip.write(
            npy_header("<U" + std::to_string(std::max<std::size_t>(1, utf32_length(prov))), {1}));
        zip.write(prov.empty() ? std::string(4, '\0') : utf32le(prov));
        zip.end();
        zip.finish();
        break;
      }
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
      case TableFile::json: {
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
        break;
      }
    }
    out.commit();
    return 0;
  };
}

}  // namespace ropesim::cli
