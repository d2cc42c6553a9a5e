// Parallel and sharded runs: --jobs N prints the bytes of --jobs 1; --shard I/N takes
// the I-th of N contiguous blocks of rows; `ropesim merge` of all shards is byte for byte the
// single run's file; bad shard specs and inconsistent shard sets are refused with one line and exit
// code 2.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cli_support.hpp"

using namespace cli_test;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

// 2 schedules x 2 realizations x 2 formats = 8 rows, at 256 positions (well under a second).
const std::string kSweep =
    "sweep --schedules 'single:g=1;conventional:base=10000,dim=8' --formats fp16,bf16 "
    "--realizations r1,r2 "
    "--positions 256 --quiet";
// 2 formats x 2 offsets = 4 rows.
const std::string kTable = "table horizon --formats fp16,bf16 --g 1 --k 1,2 --C auto --quiet";

/// Runs `command` once whole (--out DIR/merged.EXT) and as `shards` shards, merges them into
/// the same path and returns {single, merged} file contents. The recorded --out of the single
/// run and of the merge are the same path, so the provenance lines can match byte for byte.
std::pair<std::string, std::string> single_and_merged(const std::string& command,
                                                      const std::string& ext, int shards,
                                                      const std::string& tag) {
  const std::string merged = temp_path(tag + "_merged." + ext);
  const Run single = run(command + " --out " + merged);
  REQUIRE(single.code == 0);
  const std::string single_text = slurp(merged);
  std::filesystem::remove(merged);
  std::string files;
  for (int i = 1; i <= shards; ++i) {
    const std::string part = temp_path(tag + "_shard" + std::to_string(i) + "." + ext);
    // --jobs differs between shards and from the single run: it is not part of the computation
    const Run r = run(command + " --shard " + std::to_string(i) + "/" + std::to_string(shards) +
                      " --out " + part);
    INFO(r.err);
    REQUIRE(r.code == 0);
    files = part + " " + files;  // given in reverse order: merge orders them by their records
  }
  const Run m = run("merge " + files + "--out " + merged);
  INFO(m.err);
  REQUIRE(m.code == 0);
  const std::string merged_text = slurp(merged);
  std::filesystem::remove(merged);
  for (int i = 1; i <= shards; ++i)
    std::filesystem::remove(temp_path(tag + "_shard" + std::to_string(i) + "." + ext));
  return {single_text, merged_text};
}

}  // namespace

TEST_CASE("sweep: merged shards are the single run's file, byte for byte, in every file kind",
          "[cli][jobs]") {
  for (const std::string ext : {"csv", "md", "tex", "json"}) {
    INFO(ext);
    const auto [single, merged] = single_and_merged(kSweep, ext, 3, "sweep");
    CHECK(!single.empty());
    CHECK(merged == single);
  }
}

TEST_CASE("table horizon: merged shards are the single run's file, byte for byte", "[cli][jobs]") {
  for (const std::string ext : {"csv", "json", "tex"}) {
    INFO(ext);
    const auto [single, merged] = single_and_merged(kTable, ext, 3, "table");
    CHECK(merged == single);
  }
  {
    // LaTeX notes: --C auto's C carries a note mark; shard 2 (row 1 only: fp16, k = 2, C a power
    // of two) letters its one note a, the single run b (row 0's record note is a); the merge
    // letters them again.
    const auto [single, merged] = single_and_merged(kTable, "tex", 3, "table_notes");
    CHECK(single.find("\\rlap{\\textsuperscript{b}}") != std::string::npos);
    CHECK(single.find("{\\footnotesize\\textsuperscript{b}\\,") != std::string::npos);
    CHECK(merged == single);
  }
  // more shards than rows: the empty shards merge too
  for (const std::string ext : {"md", "json", "tex"}) {
    INFO(ext);
    const auto [single, merged] = single_and_merged(kTable, ext, 6, "table6");
    CHECK(merged == single);
  }
}

TEST_CASE("--shard I/N holds rows [floor((I-1)T/N), floor(IT/N)) and records the shard",
          "[cli][jobs]") {
  const std::string whole = temp_path("rr_whole.csv"), part = temp_path("rr_part.csv");
  REQUIRE(run(kSweep + " --out " + whole).code == 0);
  REQUIRE(run(kSweep + " --shard 2/3 --out " + part).code == 0);
  const auto all = lines_of(slurp(whole)), mine = lines_of(slurp(part));
  // T = 8, N = 3: shard 2 holds rows [floor(8/3), floor(16/3)) = [2, 5)
  // whole: provenance, header, 8 rows; part: provenance, shard record, command words, header,
  // rows 2, 3, 4
  REQUIRE(all.size() == 10);
  REQUIRE(mine.size() == 7);
  CHECK(mine[1] ==
        "# shard 2/3 of 8 rows (rows [2, 5) of the table, counted from 0; join the shards with "
        "ropesim merge)");
  // the command words as CLI11 parsed them: --shard's value and --out's are values of options
  const std::string prefix = "# command words: ";
  REQUIRE(mine[2].rfind(prefix, 0) == 0);
  const auto words = nlohmann::json::parse(mine[2].substr(prefix.size()));
  REQUIRE(words.size() >= 4);
  CHECK(words[0] == nlohmann::json({{"word", "sweep"}, {"option", ""}, {"role", "word"}}));
  const auto n = words.size();
  CHECK(words[n - 4] ==
        nlohmann::json({{"word", "--shard"}, {"option", "--shard"}, {"role", "name"}}));
  CHECK(words[n - 3] ==
        nlohmann::json({{"word", "2/3"}, {"option", "--shard"}, {"role", "value"}}));
  CHECK(words[n - 1] == nlohmann::json({{"word", part}, {"option", "--out"}, {"role", "value"}}));
  CHECK(mine[3] == all[1]);
  CHECK(mine[4] == all[2 + 2]);
  CHECK(mine[5] == all[2 + 3]);
  CHECK(mine[6] == all[2 + 4]);
  // and the rows are the grid's (schedule, then realization, then format): row 2 is single:g=1, r2,
  // fp16
  CHECK(mine[4].rfind("single:g=1,r2,fp16,", 0) == 0);
  CHECK(mine[6].rfind("\"conventional:base=10000,dim=8\",r1,fp16,", 0) == 0);
  const std::string json = temp_path("rr_part.json");
  REQUIRE(run(kSweep + " --shard 3/3 --out " + json).code == 0);
  const auto j = nlohmann::json::parse(slurp(json));
  CHECK(j["provenance"]["shard"]["index"] == 3);
  CHECK(j["provenance"]["shard"]["count"] == 3);
  CHECK(j["provenance"]["shard"]["rows"] == 8);
  CHECK(j["provenance"]["shard"]["words"].back() ==
        nlohmann::json({{"word", json}, {"option", "--out"}, {"role", "value"}}));
  REQUIRE(j["rows"].size() == 3);  // rows [5, 8)
  CHECK(j["rows"][0]["schedule"] == "conventional:base=10000,dim=8");
  CHECK(j["rows"][0]["realization"] == "r1");
  CHECK(j["rows"][0]["format"] == "bf16");
  for (const auto& f : {whole, part, json}) std::filesystem::remove(f);
}

TEST_CASE("--jobs 2 prints the bytes of --jobs 1 (sweep, table horizon, horizon, rotations)",
          "[cli][jobs]") {
  for (const std::string& command :
       {kSweep + " --json", kTable + " --json",
        std::string("horizon --g 1 --k 2 --C auto --format bf16 --json --quiet"),
        std::string("horizon --schedule conventional:base=10000,dim=8 --k 1 --C auto --format fp16 "
                    "--max-length 400 --json --quiet"),
        std::string("rotations --schedule conventional:base=10000,dim=16 --format fp16 --positions "
                    "512 --json")}) {
    INFO(command);
    const Run one = run(command + " --jobs 1");
    const Run two = run(command + " --jobs 2");
    REQUIRE(one.code == 0);
    CHECK(two.code == 0);
    CHECK(!one.out.empty());
    CHECK(two.out == one.out);
  }
  // --threads is the older name of --jobs
  CHECK(run(kSweep + " --json --threads 2").out == run(kSweep + " --json --jobs 1").out);
}

TEST_CASE("bad --shard: one line, exit 2, no output file", "[cli][jobs]") {
  const std::string out = temp_path("badshard.csv");
  for (const std::string spec : {"0/0", "3/2", "a/b", "2", "0/3", "1/2/3", "-1/2"}) {
    INFO(spec);
    expect_usage_error(run(kSweep + " --shard " + spec + " --out " + out),
                       "--shard: '" + spec + "'");
    CHECK_FALSE(std::filesystem::exists(out));
    expect_usage_error(run(kTable + " --shard " + spec + " --out " + out), "accepted: I/N");
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("merge refuses inconsistent shard sets: one line, exit 2, no output file",
          "[cli][jobs]") {
  auto path = [](const std::string& name) { return temp_path("mg_" + name); };
  auto make = [&](const std::string& command, const std::string& name) {
    const Run r = run(command + " --out " + path(name));
    INFO(r.err);
    REQUIRE(r.code == 0);
  };
  for (int i = 1; i <= 3; ++i) {
    make(kSweep + " --shard " + std::to_string(i) + "/3", "s" + std::to_string(i) + ".csv");
    make(kSweep + " --shard " + std::to_string(i) + "/3", "s" + std::to_string(i) + ".json");
  }
  make(kSweep + " --shard 2/4", "four2.csv");
  std::string other = kSweep;  // another computation: 128 positions
  other.replace(other.find("--positions 256"), 15, "--positions 128");
  make(other + " --shard 2/3", "other2.csv");
  make(kSweep, "whole.csv");
  make(kTable + " --shard 2/3", "table2.csv");  // another command's shard
  {
    // shard 3 cut in the middle of its last row, and the JSON shard 3 cut in half (a copy
    // interrupted: ropesim itself writes atomically)
    std::string text = slurp(path("s3.csv"));
    text.erase(text.size() - 5);
    std::ofstream(path("half3.csv"), std::ios::binary) << text;
    std::string json = slurp(path("s3.json"));
    json.erase(json.size() / 2);
    std::ofstream(path("half3.json"), std::ios::binary) << json;
  }
  {
    // shard 3 with its last row cut off
    std::string text = slurp(path("s3.csv"));
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    std::ofstream(path("cut3.csv"), std::ios::binary) << text;
  }
  const std::string out = path("out.csv");
  auto refused = [&](const std::string& files, const std::string& message,
                     const std::string& target) {
    INFO(files);
    expect_usage_error(run("merge " + files + " --out " + target), message);
    CHECK_FALSE(std::filesystem::exists(target));
  };
  const std::string s1 = path("s1.csv"), s2 = path("s2.csv"), s3 = path("s3.csv");
  refused(s1 + " " + s2, "shards missing of 3: 3 (given: 1 2)", out);
  refused(s1 + " " + s2 + " " + s2 + " " + s3, "shard 2/3 is given twice", out);
  refused(s1 + " " + path("other2.csv") + " " + s3, "different commands", out);
  refused(s1 + " " + path("other2.csv") + " " + s3, "('--positions 128' vs '--positions 256')",
          out);
  refused(s1 + " " + path("table2.csv") + " " + s3, "different commands", out);
  refused(s1 + " " + path("table2.csv") + " " + s3, "('ropesim table' vs 'ropesim sweep')", out);
  refused(s1 + " " + s2 + " " + path("half3.csv"), "the last line is cut off", out);
  refused(path("s1.json") + " " + path("s2.json") + " " + path("half3.json"), "not valid JSON",
          path("out.json"));
  refused(s1 + " " + path("four2.csv") + " " + s3, "is shard 2/4 of 8 rows", out);
  refused(s1 + " " + path("s2.json") + " " + s3, "is JSON but --out", out);
  refused(path("whole.csv"), "has no shard record", out);
  refused(s1 + " " + s2 + " " + path("cut3.csv"), "has 2 rows, expected 3", out);
  refused(s1 + " " + s2 + " " + path("absent.csv"), "absent.csv': cannot open the shard file", out);
  refused(path("s1.json") + " " + path("s2.json") + " " + path("s3.json"), "is JSON but --out",
          path("out.md"));
  {
    // shard 2 relabelled as shard 3 (both have 3 rows): its command line still says --shard 2/3
    std::string text = slurp(path("s2.csv"));
    const std::size_t at = text.find("shard 2/3 of 8 rows (rows [2, 5)");
    REQUIRE(at != std::string::npos);
    text.replace(at, 32, "shard 3/3 of 8 rows (rows [5, 8)");
    std::ofstream(path("fake3.csv"), std::ios::binary) << text;
  }
  refused(s1 + " " + s2 + " " + path("fake3.csv"), "does not ask for it", out);
  {
    // command words edited to ask for shard 3: they no longer spell the recorded command
    std::string text = slurp(path("s2.csv"));
    const std::string from = "{\"option\":\"--shard\",\"role\":\"value\",\"word\":\"2/3\"}";
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), "{\"option\":\"--shard\",\"role\":\"value\",\"word\":\"3/3\"}");
    std::ofstream(path("words3.csv"), std::ios::binary) << text;
    // a shard without its command words (as written before they were recorded)
    std::string old = slurp(path("s3.csv"));
    const std::size_t line = old.find("# command words: ");
    REQUIRE(line != std::string::npos);
    old.erase(line, old.find('\n', line) + 1 - line);
    std::ofstream(path("old3.csv"), std::ios::binary) << old;
  }
  refused(s1 + " " + s2 + " " + path("words3.csv"), "do not spell its recorded command", out);
  refused(s1 + " " + s2 + " " + path("old3.csv"), "has no command words", out);
  // --out naming one of the shards would destroy it
  {
    const std::string before = slurp(s1);
    expect_usage_error(run("merge " + s1 + " " + s2 + " " + s3 + " --out " + s1),
                       "is one of the shard files");
    CHECK(slurp(s1) == before);
  }
  // and the consistent set merges
  CHECK(run("merge " + s3 + " " + s1 + " " + s2 + " --out " + out).code == 0);
  CHECK(std::filesystem::exists(out));
  for (const auto& name :
       {"s1.csv", "s2.csv", "s3.csv", "s1.json", "s2.json", "s3.json", "four2.csv", "other2.csv",
        "whole.csv", "cut3.csv", "fake3.csv", "words3.csv", "old3.csv", "out.csv", "table2.csv",
        "half3.csv", "half3.json"}) {
    std::filesystem::remove(path(name));
  }
}

TEST_CASE("merge: shards written with -o merge, and merge takes -o", "[jobs]") {
  auto path = [](const std::string& name) { return temp_path("mo_" + name); };
  for (int i = 1; i <= 2; ++i) {
    const Run r = run(kSweep + " --shard " + std::to_string(i) + "/2 -o " +
                      path("s" + std::to_string(i) + ".csv"));
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  const Run whole = run(kSweep + " -o " + path("whole.csv"));
  REQUIRE(whole.code == 0);
  const Run merged =
      run("merge " + path("s1.csv") + " " + path("s2.csv") + " -o " + path("merged.csv"));
  INFO(merged.err);
  REQUIRE(merged.code == 0);
  // Same rows as the single run (the provenance lines name different commands).
  auto rows = [](const std::string& file) {
    std::ifstream in(file);
    std::string line, text;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] != '#') text += line + "\n";
    }
    return text;
  };
  CHECK(rows(path("merged.csv")) == rows(path("whole.csv")));
  CHECK_FALSE(rows(path("whole.csv")).empty());
  for (const auto& name : {"s1.csv", "s2.csv", "whole.csv", "merged.csv"})
    std::filesystem::remove(path(name));
}
