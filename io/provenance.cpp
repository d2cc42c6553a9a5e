// Provenance and rendering of written tables (io/provenance.hpp).
#include "io/provenance.hpp"

#include "numeric/libm.hpp"
#include "numeric/version.hpp"

namespace ropesim::io {

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

Provenance provenance_of(std::vector<CommandWord> words) {
  Provenance p;
  for (const auto& w : words) p.command += " " + shell_word(w.text);
  p.words = std::move(words);
  return p;
}

nlohmann::json to_json(const Provenance& provenance) {
  return {{"tool", "ropesim"},
          {"version", std::string(ropesim::version())},
          {"commit", std::string(ropesim::source_commit())},
          {"command", provenance.command},
          // the math libraries the :glibc and :sleef-u10 pipeline steps call: another glibc
          // may give other bits (numeric/libm.hpp)
          {"libm", {{"glibc", numeric::glibc_version()}, {"sleef", numeric::sleef_version()}}}};
}

std::string provenance_line(const Provenance& provenance) {
  return "ropesim " + std::string(ropesim::version()) + " (commit " +
         std::string(ropesim::source_commit()) + "); command: " + provenance.command;
}

std::string render(const Table& table, OutputKind kind, const Provenance& provenance,
                   const std::optional<ShardRecord>& shard) {
  std::string line = provenance_line(provenance);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const std::string shard_text = shard ? shard_line(*shard) : std::string();
  nlohmann::json words = nlohmann::json::array();
  for (const auto& w : provenance.words) words.push_back(to_json(w));
  const std::string words_text = "command words: " + words.dump();
  switch (kind) {
    case OutputKind::csv:
      return "# " + line + "\n" + (shard ? "# " + shard_text + "\n# " + words_text + "\n" : "") +
             table.to_csv();
    case OutputKind::markdown:
      return "Made by ropesim " + std::string(ropesim::version()) + " (commit " +
             std::string(ropesim::source_commit()) + "): `" + provenance.command + "`\n\n" +
             (shard ? shard_text + "\n\n" + words_text + "\n\n" : "") + table.to_markdown();
    case OutputKind::json: {
      nlohmann::json j = {{"provenance", to_json(provenance)}, {"rows", table.to_json()}};
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

}  // namespace ropesim::io
