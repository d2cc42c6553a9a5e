// Strict input, "accepted though wrong, or refused though right": every input that was accepted
// though wrong (atoms outside the alphabet, empty or repeated list items, duplicate JSON keys,
// 1e3 for an integer), refused though right (1e400 in a config.json) or answered with a
// misleading message stays a test. Bad input: one line on stderr, exit 2, nothing on stdout,
// no file written (cli_support.hpp expect_usage_error).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// A valid DFA file text: {a, b}, accepts the words that contain an a (state 1 absorbs).
const std::string kDfaBody =
    R"("alphabet": ["a", "b"], "states": 2, "initial": 0, "accepting": [1], "transitions": [[1, 0], [1, 1]])";

}  // namespace

TEST_CASE("compile refuses an atom outside the alphabet, as classify does", "[cli][strict]") {
  const std::string out = temp_path("strict_compile_c.json");
  std::filesystem::remove(out);
  const Run r = run("compile c --alphabet ab --out " + out);
  expect_usage_error(r, "atom 'c' is not a letter of the alphabet");
  CHECK(!std::filesystem::exists(out));
  expect_usage_error(run("classify --alphabet ab --formula c"),
                     "atom 'c' is not a letter of the alphabet");
  // Inside a formula too (it used to compile to a coordinate that is 0 everywhere).
  expect_usage_error(run("compile 'P(a & !c)' --alphabet ab"), "atom 'c'");
  REQUIRE(run("compile 'P(a & !b)' --alphabet ab").code == 0);
}

TEST_CASE("check refuses a format its properties cannot use (bad input, not a theorem failure)",
          "[cli][strict]") {
  const Run r = run("check --property periodic-r3 --format fixed:8.8 --trials 3");
  expect_usage_error(r, "--format: 'fixed:8.8' is fixed point");
  CHECK(r.err.find("accepted: a floating format with precision 4..53") != std::string::npos);
  // bounded-lookback draws precisions 8..24: fp64 is outside.
  expect_usage_error(run("check --property bounded-lookback --format fp64 --trials 3"),
                     "precisions 8..24");
  // A format it can use still runs.
  const Run ok =
      run("check --property periodic-r3 --format fp16 --trials 3 --max-length 50 --quiet");
  CHECK(ok.code == 0);
}

TEST_CASE("config.json and DFA files refuse duplicate keys; DFA files refuse unknown keys",
          "[cli][strict]") {
  const std::string config = write_file(
      "strict_dup_config.json", R"({"head_dim": 8, "rope_theta": 10000, "rope_theta": 500000})");
  const Run r = run("rotations --schedule hf-config:" + config + " --position 3");
  expect_usage_error(r, "duplicate key 'rope_theta'");
  CHECK(r.err.find(config) != std::string::npos);
  // Nested, inside rope_scaling.
  write_file(
      "strict_dup_config.json",
      R"({"head_dim": 8, "rope_scaling": {"rope_type": "linear", "factor": 2, "factor": 4}})");
  expect_usage_error(run("rotations --schedule hf-config:" + config + " --position 3"),
                     "duplicate key 'factor'");
  std::filesystem::remove(config);

  const std::string dfa = write_file("strict_dup.dfa.json", "{" + kDfaBody + R"(, "initial": 1})");
  expect_usage_error(run("classify --dfa " + dfa), "duplicate key 'initial'");
  write_file("strict_dup.dfa.json", "{" + kDfaBody + R"(, "acepting": [0]})");
  const Run unknown = run("classify --dfa " + dfa);
  expect_usage_error(unknown, "unknown key 'acepting'");
  CHECK(unknown.err.find("accepted: alphabet, states, initial, accepting, transitions") !=
        std::string::npos);
  // The same file without the extra key is a DFA: "contains an a" (states 0 → 1, no way back)
  // is partially ordered, so LTL[P] (T2).
  write_file("strict_dup.dfa.json", "{" + kDfaBody + "}");
  const Run good = run("classify --dfa " + dfa + " --json");
  REQUIRE(good.code == 0);
  CHECK(nlohmann::json::parse(good.out)["class"] == "LTL[P]");
  std::filesystem::remove(dfa);
}

TEST_CASE("lists refuse empty items", "[cli][strict]") {
  const std::string rotate = "rotate --schedule single:g=1 --offset 1 ";
  // D = 2 for single:g=1: '1,,0' used to be read as the two values 1, 0.
  expect_usage_error(run(rotate + "--q '1,,0' --k 1,0 --position 3"),
                     "--q: empty item in '1,,0' (item 2)");
  expect_usage_error(run(rotate + "--q 1,0 --k '1,0,' --position 3"), "--k: empty item");
  expect_usage_error(run(rotate + "--q 1,0 --k 1,0 --positions '3,,4'"),
                     "--positions: empty item in '3,,4'");
  REQUIRE(run(rotate + "--q 1,0 --k 1,0 --positions 3,4").code == 0);
  // Format lists: 'p=8,e=5;;' used to be the one format p=8,e=5.
  expect_usage_error(run("formats --formats 'p=8,e=5;;'"), "--formats: empty item");
  expect_usage_error(run("formats --formats 'p=8,,e=5'"), "empty item");
  expect_usage_error(run("formats --formats ',fp16'"), "empty item");
  // Pipeline steps: 'pipeline:;;;' used to be the hf pipeline.
  const Run pipeline =
      run("rotations --schedule single:g=1 --position 3 --realization 'pipeline:;;;'");
  expect_usage_error(pipeline, "empty item");
  CHECK(pipeline.err.find("pipeline:;;;") != std::string::npos);
  expect_usage_error(
      run("rotations --schedule single:g=1 --position 3 --realization 'pipeline:inv_freq=fp16;'"),
      "empty item");
  // Terminal columns.
  expect_usage_error(run("formats --columns 'name,,f_large'"), "--columns: empty item");
  expect_usage_error(run("formats --columns name,name"), "--columns: 'name' is listed twice");
  // Schedule specs.
  expect_usage_error(run("rotations --schedule 'conventional:base=10000,,dim=8' --position 3"),
                     "empty item");
  expect_usage_error(run("rotations --schedule 'periodic:m=2,,3' --position 3"), "empty item");
}

TEST_CASE("lists and options refuse repeats where CLI.md forbids them", "[cli][strict]") {
  expect_usage_error(run("rotate --schedule single:g=1 --offset 1 --q 1,0 --k 1,0 --positions 3,3"),
                     "'3' is listed twice");
  // Repeated values inside a vector are values, not list items: accepted.
  REQUIRE(run("rotate --schedule single:g=1 --offset 1 --q 1,1 --k 1,1 --position 3").code == 0);
  expect_usage_error(run("accumulate --terms 8 --keys 2 --accumulator fp32 --accumulator fp32"),
                     "--accumulator: 'fp32' is given twice");
  // Not even under another spelling (fp32 is p=24,e=8, as for --formats).
  expect_usage_error(
      run("accumulate --terms 8 --keys 2 --accumulator fp32 --accumulator 'p=24,e=8'"),
      "are the same accumulator");
  // A format repeated under an alias, whichever spelling comes first (half,fp16 was accepted
  // and printed the row twice while fp16,half was refused).
  for (const char* list :
       {"half,fp16", "fp16,half", "bfloat16,bf16", "float,fp32", "fp32,float", "p=11,e=5,fp16"}) {
    INFO(list);
    expect_usage_error(run(std::string("formats --formats '") + list + "'"),
                       "listed earlier; list each format once");
  }
  expect_usage_error(run("table horizon --formats half,fp16 --g 1 --k 1 --C 64 --quiet"),
                     "listed earlier");
  expect_usage_error(run("sweep --models phi-2 --formats bfloat16,bf16 --realizations r1"),
                     "listed earlier");
  // Format options: 'subnormals=off,subnormals=on' says two things.
  expect_usage_error(run("formats --formats 'p=8,e=5,subnormals=off,subnormals=on'"),
                     "'subnormals' is given twice");
  expect_usage_error(run("rotations --schedule single:g=1 --position 3 --format "
                         "'fp16,overflow=saturate,overflow=inf'"),
                     "'overflow' is given twice");
  expect_usage_error(
      run("rotations --schedule 'conventional:base=10000,dim=8,base=500000' --position 3"),
      "key 'base' is given twice");
}

TEST_CASE("integer options take decimal digits only: not 1e3, not 3.0", "[cli][strict]") {
  expect_usage_error(run("construct mod --m 1e3 --r 0"), "--m: '1e3' is not an integer");
  expect_usage_error(run("construct mod --m 3.0 --r 0"), "--m: '3.0' is not an integer");
  expect_usage_error(run("construct mod --m 3 --r 1.0"), "--r: '1.0' is not an integer");
  expect_usage_error(run("horizon --g 1 --k 3.0 --format fp16"), "--k: '3.0' is not an integer");
  expect_usage_error(run("horizon --g 1 --k 1e0 --format fp16"), "--k: '1e0' is not an integer");
  expect_usage_error(run("compile a --alphabet ab --certify 1e3"),
                     "--certify: '1e3' is not an integer");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 1e3"), "--positions");
  expect_usage_error(run("rotations --schedule single:g=1 --positions 3.0"), "--positions");
  // Integer keys of schedule specs too.
  expect_usage_error(run("rotations --schedule 'conventional:base=10000,dim=8.0' --position 3"),
                     "dim: '8.0' is not an integer");
  expect_usage_error(run("rotations --schedule 'periodic:m=2e0' --position 3"),
                     "m: '2e0' is not an integer");
  expect_usage_error(run("rotations --schedule 'hirope:base=10000,dim=16,levels=2.0' --position 3"),
                     "levels: '2.0' is not an integer");
  REQUIRE(run("rotations --schedule 'conventional:base=1e4,dim=8' --position 3").code ==
          0);  // base is a decimal
  expect_usage_error(run("compare --schedule conventional:base=10000,dim=8 --realization r1 "
                         "--positions 4 --blocks 1.0"),
                     "--blocks: '1.0'");
}

TEST_CASE("config.json numbers are read exactly: 1e400, 2001 digits, factor 1e400",
          "[cli][strict]") {
  // θ_0 = 1 whatever the base (θ_k = base^(-2k/d)), so block 0 turns by exactly 3 at position 3.
  for (const std::string& theta : {std::string("1e400"), "1" + std::string(2000, '0')}) {
    INFO(theta.substr(0, 10));
    const std::string config =
        write_file("strict_big_theta.json", R"({"head_dim": 4, "rope_theta": )" + theta + "}");
    const Run r = run("rotations --schedule hf-config:" + config + " --position 3 --json");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["blocks"][0]["exact_angle"].get<double>() == 3.0);
    std::filesystem::remove(config);
  }
  // Linear scaling divides every θ by the factor: 3 / 1e400 underflows a double to 0.
  const std::string config =
      write_file("strict_big_factor.json",
                 R"({"head_dim": 4, "rope_scaling": {"rope_type": "linear", "factor": 1e400}})");
  const Run r = run("rotations --schedule hf-config:" + config + " --position 3 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["blocks"][0]["exact_angle"].get<double>() == 0.0);
  std::filesystem::remove(config);
  // A directory is a directory, not malformed JSON.
  const Run dir =
      run("rotations --schedule hf-config:" + std::filesystem::temp_directory_path().string() +
          " --position 3");
  expect_usage_error(dir, "is a directory");
  CHECK(dir.err.find("malformed JSON") == std::string::npos);
  // A number where a string belongs (and vice versa) is named as what it is.
  const std::string bad =
      write_file("strict_string_theta.json", R"({"head_dim": 4, "rope_theta": "1e4"})");
  expect_usage_error(run("rotations --schedule hf-config:" + bad + " --position 3"),
                     "rope_theta must be a number, got string \"1e4\"");
  std::filesystem::remove(bad);
}

TEST_CASE("messages say what the input is", "[cli][strict]") {
  // A model spec's JSON number where an integer belongs: "got number 2.5", not "got string".
  const std::string model = temp_path("strict_model.json");
  REQUIRE(run("construct offset --g 1 --k 1 --format fp16 --out " + model).code == 0);
  nlohmann::json spec;
  {
    std::ifstream in(model);
    spec = nlohmann::json::parse(in);
  }
  nlohmann::json edited = spec;
  edited["d_model"] = 2.5;
  std::ofstream(model) << edited.dump();
  const Run number = run("run " + model + " --input ab");
  expect_usage_error(number, "got number 2.5");
  CHECK(number.err.find("got string") == std::string::npos);
  // An exponent too large to expand is a number with a large exponent, not "not a number".
  edited = spec;
  const auto head_dim = edited["layers"][0]["heads"][0]["head_dim"].get<std::size_t>();
  edited["layers"][0]["heads"][0]["query_bias"] = std::vector<double>(head_dim, 12345.5);
  std::string text = edited.dump();
  text.replace(text.find("12345.5"), 7, "1e999999");
  std::ofstream(model) << text;
  const Run exponent = run("run " + model + " --input ab");
  expect_usage_error(exponent, "query_bias[0]: number = '1e999999' has an exponent beyond");
  CHECK(exponent.err.find("is not a number") == std::string::npos);
  std::filesystem::remove(model);

  // A symbol containing NUL is echoed whole (\x00), the message not cut there.
  const std::string dfa = write_file(
      "strict_nul.dfa.json",
      R"({"alphabet": ["a\u0000b", "a\u0000b"], "states": 1, "initial": 0, "accepting": [], "transitions": [[0, 0]]})");
  const Run nul = run("classify --dfa " + dfa);
  expect_usage_error(nul, "a\\x00b");
  CHECK(nul.err.find("twice") != std::string::npos);
  std::filesystem::remove(dfa);

  // é is one character: echoed as UTF-8, never as a lone byte.
  const Run e_regex = run("classify --alphabet ab --regex 'aé'");
  expect_usage_error(e_regex, "--regex: 'é' at column 2 is not a letter of the alphabet");
  const Run e_compile = run("compile a --alphabet 'aé'");
  expect_usage_error(e_compile, "--alphabet: 'é' is not a symbol");
  // ... and one letter of its own in classify: é* over {é} is every word, a minimal DFA of
  // 1 state (accepting, a self-loop).
  const Run e_ok = run("classify --alphabet 'é' --regex 'é*' --json");
  REQUIRE(e_ok.code == 0);
  CHECK(nlohmann::json::parse(e_ok.out)["states"] == 1);
  // A byte that is not UTF-8 is shown as \xNN.
  const Run latin1 = run("classify --alphabet ab --regex \"$(printf 'a\\351')\"");
  expect_usage_error(latin1, "\\xe9");

  // classify --regex: letters that are no formula atoms ('A', 'é') used to fail with a
  // "formula:" error after classifying; now the class stands and the C3 formula is "none".
  const Run upper = run("classify --alphabet AB --regex 'A.*' --json");
  REQUIRE(upper.code == 0);
  const auto upper_json = nlohmann::json::parse(upper.out);
  CHECK(upper_json["class"] == "LTL[P]");  // starts with A: states init → accept/reject sinks
  CHECK(upper_json["formula"]["text"].is_null());
  CHECK(upper_json["formula"]["unavailable"].get<std::string>().find(
            "letter 'A' is not a formula atom") != std::string::npos);
  const Run upper_text = run("classify --alphabet AB --regex 'A.*'");
  REQUIRE(upper_text.code == 0);
  CHECK(upper_text.err.empty());
  CHECK(upper_text.out.find("formula      none: letter 'A' is not a formula atom") !=
        std::string::npos);
  // classify --regex errors name --regex.
  const Run regex = run("classify --alphabet ab --regex '(a'");
  expect_usage_error(regex, "--regex: '(' at column 1 is never closed");
  CHECK(regex.err.find("formula") == std::string::npos);

  // merge blames an input's extension, not an "output extension".
  const std::string shard = write_file("strict_shard.txt", "x\n");
  const Run merge = run("merge " + shard + " --out " + temp_path("strict_merged.csv"));
  expect_usage_error(merge, "unknown input extension '.txt'");
  CHECK(merge.err.find("output extension") == std::string::npos);
  std::filesystem::remove(shard);

  // rotations -o '' lists only what rotations writes.
  const Run empty_out = run("rotations --schedule single:g=1 --position 3 -o ''");
  expect_usage_error(empty_out, "--out: empty file name; accepted: a path ending in .json");
  CHECK(empty_out.err.find(".csv") == std::string::npos);
  expect_usage_error(
      run("rotations --schedule single:g=1 --position 3 -o " + temp_path("strict.csv")),
      "accepted: a path ending in .json");

  // compile --certify abc: an integer is wanted, so no decimal (0.75) is suggested.
  const Run certify = run("compile a --alphabet ab --certify abc");
  expect_usage_error(certify,
                     "--certify: 'abc' is not an integer; accepted: an integer in 1..1000000");
  CHECK(certify.err.find("0.75") == std::string::npos);

  // seq_len beyond 2^64 - 1 is out of range, not "not an integer >= 1".
  const std::string config = write_file(
      "strict_seq_len.json",
      R"({"head_dim": 4, "max_position_embeddings": 16, "rope_scaling": {"rope_type": "dynamic", "factor": 2}})");
  const Run seq = run("rotations --schedule 'hf-config[seq_len=99999999999999999999]:" + config +
                      "' --position 3");
  expect_usage_error(
      seq, "seq_len: '99999999999999999999' is out of range; accepted: an integer in 1..");
  CHECK(seq.err.find("must be an integer") == std::string::npos);
  REQUIRE(run("rotations --schedule 'hf-config[seq_len=32]:" + config + "' --position 3").code ==
          0);
  std::filesystem::remove(config);
  const Run table =
      run("rotations --schedule single:g=1 --position 3 --realization "
          "'resonance-table[seq_len=99999999999999999999]'");
  expect_usage_error(table, "is out of range");
}

TEST_CASE("classify --model prints the same bytes on stdout every time; timings go to stderr",
          "[cli][strict]") {
  const std::string model = temp_path("strict_classify_model.json");
  REQUIRE(run("compile 'P a' --alphabet ab --format fp16 --out " + model).code == 0);
  const std::string command =
      "classify --model " + model + " --exhaustive-length 4 --random-words 3 --random-length 8";
  const Run first = run(command);
  const Run second = run(command);
  REQUIRE(first.code == 0);
  CHECK(first.out == second.out);
  CHECK(first.out.find("time ") == std::string::npos);
  CHECK(first.err.find("extraction took") != std::string::npos);
  const Run json_first = run(command + " --json");
  const Run json_second = run(command + " --json");
  REQUIRE(json_first.code == 0);
  CHECK(json_first.out == json_second.out);
  CHECK(!nlohmann::json::parse(json_first.out)["source"]["extraction"].contains("seconds"));
  std::filesystem::remove(model);
}

TEST_CASE("an empty value given to a flag is refused, not taken as the flag's absence",
          "[cli][strict]") {
  // Issue 39: check --replay '' ran the whole property; run --positions '' traced nothing.
  expect_usage_error(run("check --property binary-mod --trials 2 --replay ''"), "--replay");
  const std::string model = temp_path("strict_empty_mod3.json");
  REQUIRE(run("construct mod --m 3 --r 0 --format fp16 -o " + model).code == 0);
  expect_usage_error(run("run " + model + " --input ab --positions ''"), "--positions");
  std::filesystem::remove(model);
}

TEST_CASE("a tab in an echoed value is shown as \\t, never raw", "[cli][strict]") {
  // The tab reaches ropesim inside single quotes: --alphabet 'a<TAB>b'.
  const Run tab = run("compile 'P a' --alphabet 'a\tb' -o /dev/null");
  INFO(tab.err);
  CHECK(tab.code == 2);
  CHECK(tab.err.find('\t') == std::string::npos);
  CHECK(tab.err.find("'\\t'") != std::string::npos);
}
