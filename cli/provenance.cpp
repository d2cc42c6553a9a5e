// The run's provenance (the command line recorded, the version, the libm), a table rendered
// with it (render), and the model spec files: declared in cli/table.hpp.
#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "attention/realisations/realisation.hpp"
#include "cli/table.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "io/files.hpp"
#include "numeric/decimal_text.hpp"
#include "numeric/flags.hpp"
#include "numeric/libm.hpp"
#include "numeric/version.hpp"

namespace ropesim::cli {

namespace {
std::string& recorded_command() {
  static std::string command = "ropesim";
  return command;
}

}  // namespace

namespace {
std::vector<CommandWord>& command_words_store() {
  static std::vector<CommandWord> words;
  return words;
}
}  // namespace

void set_command_words(std::vector<CommandWord> words) { command_words_store() = std::move(words); }

const std::vector<CommandWord>& recorded_command_words() { return command_words_store(); }

void set_command_line(int argc, char** argv) {
  std::string command = "ropesim";
  for (int i = 1; i < argc; ++i) command += " " + shell_word(argv[i]);
  recorded_command() = std::move(command);
}

namespace {
io::Provenance recorded_provenance() { return {recorded_command(), recorded_command_words()}; }
}  // namespace

nlohmann::json provenance() { return io::to_json(recorded_provenance()); }

std::string provenance_line() { return io::provenance_line(recorded_provenance()); }

std::string model_spec_text(const nlohmann::json& spec) { return spec.dump(2) + "\n"; }

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
  std::string out;
  for (unsigned int k = 0; k < n; ++k) out += fmt::format("{:02x}", digest[k]);
  return out;
}

void write_model_spec(const std::string& path, const nlohmann::json& spec) {
  const std::string text = model_spec_text(spec);
  if (text.size() > kMaxInputFileBytes) {
    throw BudgetExceeded(
        fmt::format("--out: the model spec would be {} ({} bytes), more than the {} that ropesim "
                    "run reads; nothing written",
                    size_text(static_cast<double>(text.size())), text.size(),
                    size_text(static_cast<double>(kMaxInputFileBytes))));
  }
  io::write_output_file(path, text);
}

std::string flags_text(std::uint8_t flags) {
  std::string s;
  const numeric::Flags raised = numeric::Flags::from_bits(flags);
  if (raised.test(numeric::Flag::overflow)) s += "overflow";
  if (raised.test(numeric::Flag::invalid)) s += s.empty() ? "NaN" : ",NaN";
  return s.empty() ? "-" : s;
}

void write_and_print(const Table& table, const std::optional<OutputKind>& kind,
                     const std::string& out, const std::optional<ShardRecord>& shard, bool json,
                     bool quiet, const std::string& columns) {
  if (shard && !columns.empty()) {
    throw InvalidArgument(
        "--columns: a shard file keeps every column (ropesim merge needs them); accepted: "
        "--columns without --shard, or on ropesim merge");
  }
  const Table file = table.for_files(columns);
  const Table terminal = table.for_terminal(columns);
  if (kind) io::write_output_file(out, render(file, *kind, shard));
  if (quiet && kind) return;
  if (json) {
    std::cout << file.to_json().dump(2) << "\n";
  } else {
    std::cout << terminal.to_text();
  }
}

TableDestination table_destination(bool out_given, const std::string& out, bool shard_given,
                                   const std::string& shard) {
  TableDestination to;
  if (out_given) {
    to.kind = output_kind_for(out, "--out");
    io::check_output_path(out, "--out");
    to.out = out;
  }
  if (shard_given) to.shard = parse_shard(shard);
  return to;
}

void finish_table(const Table& table, const TableDestination& to, std::uint64_t total_rows,
                  bool json, bool quiet, const std::string& columns) {
  std::optional<ShardRecord> record;
  if (to.shard) record = ShardRecord{*to.shard, total_rows};
  write_and_print(table, to.kind, to.out, record, json, quiet, columns);
}

std::string render(const Table& table, OutputKind kind, const std::optional<ShardRecord>& shard) {
  return io::render(table, kind, recorded_provenance(), shard);
}

}  // namespace ropesim::cli
