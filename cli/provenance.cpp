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

#include "attention/realisation.hpp"
#include "cli/table.hpp"
#include "io/files.hpp"
#include "numeric/budget.hpp"
#include "numeric/decimal_text.hpp"
#include "numeric/error.hpp"
#include "numeric/flags.hpp"
#include "numeric/libm.hpp"
#include "numeric/lists.hpp"
#include "numeric/suggest.hpp"
#include "numeric/version.hpp"

namespace ropesim::cli {

namespace {
std::string& recorded_command() {
  static std::string command = "ropesim";
  return command;
}

}  // namespace

std::string shell_word(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "-_=.,:/+@%^") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

namespace {
std::vector<CommandWord>& command_words_store() {
  static std::vector<CommandWord> words;
  return words;
}
}  // namespace

void set_command_words(std::vector<CommandWord> words) { command_words_store() = std::move(words); }

const std::vector<CommandWord>& recorded_command_words() { return command_words_store(); }

nlohmann::json to_json(const CommandWord& w) {
  nlohmann::json j = {{"word", w.text}, {"option", w.option}, {"role", w.role}};
  if (w.role == "name=value") j["value_at"] = w.value_at;
  return j;
}

std::optional<CommandWord> command_word_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("word") || !j["word"].is_string() || !j.contains("option") ||
      !j["option"].is_string() || !j.contains("role") || !j["role"].is_string()) {
    return std::nullopt;
  }
  CommandWord w{j["word"], j["option"], j["role"], 0};
  if (w.role == "name=value") {
    if (!j.contains("value_at") || !j["value_at"].is_number_unsigned()) return std::nullopt;
    w.value_at = j["value_at"];
    if (w.value_at == 0 || w.value_at > w.text.size()) return std::nullopt;
  } else if (w.role != "name" && w.role != "value" && w.role != "word") {
    return std::nullopt;
  }
  if (j.size() != (w.role == "name=value" ? 4u : 3u)) return std::nullopt;
  return w;
}

void set_command_line(int argc, char** argv) {
  std::string command = "ropesim";
  for (int i = 1; i < argc; ++i) command += " " + shell_word(argv[i]);
  recorded_command() = std::move(command);
}

nlohmann::json provenance() {
  return {{"tool", "ropesim"},
          {"version", std::string(ropesim::version())},
          {"commit", std::string(ropesim::source_commit())},
          {"command", recorded_command()},
          // the math libraries the :glibc and :sleef-u10 pipeline steps call: another glibc
          // may give other bits (numeric/libm.hpp)
          {"libm", {{"glibc", numeric::glibc_version()}, {"sleef", numeric::sleef_version()}}}};
}

std::string provenance_line() {
  return "ropesim " + std::string(ropesim::version()) + " (commit " +
         std::string(ropesim::source_commit()) + "); command: " + recorded_command();
}

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

std::string render(const Table& table, OutputKind kind, const std::optional<ShardRecord>& shard) {
  std::string line = provenance_line();
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const std::string shard_text = shard ? shard_line(*shard) : std::string();
  nlohmann::json words = nlohmann::json::array();
  for (const auto& w : recorded_command_words()) words.push_back(to_json(w));
  const std::string words_text = "command words: " + words.dump();
  switch (kind) {
    case OutputKind::csv:
      return "# " + line + "\n" + (shard ? "# " + shard_text + "\n# " + words_text + "\n" : "") +
             table.to_csv();
    case OutputKind::markdown:
      return "Made by ropesim " + std::string(ropesim::version()) + " (commit " +
             std::string(ropesim::source_commit()) + "): `" + recorded_command() + "`\n\n" +
             (shard ? shard_text + "\n\n" + words_text + "\n\n" : "") + table.to_markdown();
    case OutputKind::json: {
      nlohmann::json j = {{"provenance", provenance()}, {"rows", table.to_json()}};
      if (shard) {
        j["provenance"]["shard"] = {{"index", shard->shard.index},
                                    {"count", shard->shard.count},
                                    {"rows", shard->total_rows},
                                    {"words", words}};
      }
      return j.dump(2) + "\n";
    }
    case OutputKind::latex:
      return "% " + line + "\n" + (shard ? "% " + shard_text + "\n% " + words_text + "\n" : "") +
             table.to_latex();
  }
  return {};
}

}  // namespace ropesim::cli
