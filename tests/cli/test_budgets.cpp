// Inputs without a budget: every input that ran on (hours, gigabytes, an OOM kill
// or "internal error") instead of being refused with the estimate stays a test. Each refusal is
// one line on stderr, exit code 2, nothing on stdout, no file, and comes at once: every command
// runs under `ulimit -v 4000000` (so a regression fails with bad_alloc instead of eating the
// machine) and `timeout 60` (so it fails instead of hanging), and the tests assert that the
// refusal took less than 5 s of wall time (a guard against a hang, not a speed target: the
// refusals are estimates from the arguments and take milliseconds).
// Expected numbers are derived by hand in the comments (core/budget.hpp has the limits).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

/// Runs `ropesim ARGUMENTS` with at most ~3.8 GiB of address space and 60 s, through the shell
/// run() starts (a first harmless command, then the guarded one), and the wall time it took.
struct TimedRun {
  Run run;
  double seconds = 0;
};

TimedRun guarded(const std::string& arguments, const std::string& environment = "") {
  const auto start = std::chrono::steady_clock::now();
  TimedRun t;
  t.run = run("--version >/dev/null; " + memory_limit() + environment + " timeout 60 " +
              std::string(ROPESIM_BINARY) + " " + arguments);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

/// The refusal contract: exit 2, one line containing every piece of `must_contain`, nothing on
/// stdout, and in well under the 60 s the guard allows (`limit` seconds of wall time).
void expect_quick_refusal(const TimedRun& t, std::initializer_list<std::string> must_contain,
                          double limit = 5) {
  INFO(t.run.err);
  INFO("seconds: " << t.seconds);
  CHECK(t.run.code == 2);
  CHECK(lines(t.run.err) == 1);
  CHECK(t.run.out.empty());
  for (const auto& piece : must_contain) CHECK(t.run.err.find(piece) != std::string::npos);
  CHECK(t.run.err.find("internal error") == std::string::npos);
  CHECK(t.seconds < limit);
}

/// "a0 & a1 & ... & a(n-1)": n distinct atoms, a left-associated chain of n - 1 conjunctions.
std::string conjunction_of(int n) {
  std::string f;
  for (int i = 0; i < n; ++i) f += (i ? " & a" : "a") + std::to_string(i);
  return f;
}

void write_script(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

}  // namespace

TEST_CASE("compile: mod(2^64-1,0) is refused by its table size, not 'internal error: vector'",
          "[cli][budgets]") {
  // The MOD head holds a periodic table and checks a margin per residue: m = 2^64 - 1 =
  // 18446744073709551615 ≈ 1.84e19 residues against kMaxModulus = 10000. It used to exit 1 with
  // "internal error: vector::_M_default_append".
  const std::string out = temp_path("mod_huge.json");
  expect_quick_refusal(
      guarded("compile 'mod(18446744073709551615,0)' --out " + out),
      {"mod(18446744073709551615,0)", "1.84e+19 residues", "accepted: moduli m <= 10000"});
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("compile: mod(10^8,0) names the modulus, not 'positions, model dimensions'",
          "[cli][budgets]") {
  // 10^8 residues > 10000; it used to run out of memory and get the bad_alloc message about
  // positions and model dimensions, which compile does not have.
  const TimedRun t = guarded("compile 'mod(100000000,0)'");
  expect_quick_refusal(t, {"mod(100000000,0)", "1e+08 residues", "m <= 10000"});
  CHECK(t.run.err.find("positions, model dimensions") == std::string::npos);
  // The same limit as construct mod --m (one constant, kMaxModulus).
  expect_quick_refusal(guarded("construct mod --m 10001 --r 0"), {"--m", "10000"});
}

TEST_CASE("compile: Y^(2^64-1) a is refused by the model's size at once (it ran at 1.8 GB)",
          "[cli][budgets]") {
  // Y^k a needs the gate P^k true: k P heads, each with a coordinate and a raw coordinate.
  // Over the default alphabet ab: d_model = bos, top, sym:a, sym:b (4) + Y node and its raw (2)
  // + 2k = 2^65 + 4 ≈ 3.69e19; P^j true sits in layer j - 1, so Y^k a is in layer k and the model
  // has k + 1 ≈ 1.84e19 layers.
  const std::string out = temp_path("yk_huge.json");
  expect_quick_refusal(guarded("compile 'Y^18446744073709551615 a' --out " + out),
                       {"d_model 3.69e+19", "1.84e+19 layers",
                        "accepted: models that ropesim run reads", "16777216 numbers", "64 MiB"});
  CHECK_FALSE(std::filesystem::exists(out));
  // classify refuses the same formula at once too (formula automaton state cap).
  const TimedRun c = guarded("classify --formula 'Y^18446744073709551615 a' --alphabet ab");
  CHECK(c.run.code == 2);
  CHECK(c.seconds < 5);
}

TEST_CASE("compile: a conjunction of 10,000 atoms is refused at once (it reached 3.5 GB)",
          "[cli][budgets]") {
  // a0 & ... & a9999 over ab: d_model = 4 + 10000 atoms + 9999 conjunctions = 20003; the chain
  // puts one conjunction per layer: 9999 layers, one hidden unit each. The count run compares
  // with 2^24: d·(3 + 2) + 5·d·L + (2d + 1)·hidden + d·L
  //   = 20003·5 + 5·20003·9999 + 40007·9999 + 20003·9999 = 1600189990 ≈ 1.6e9.
  // Spec bytes at least 16 per matrix entry (2·d·hidden) + 24 per row (hidden + d·L):
  //   16·400019994 + 24·200019996 = 11200799808 bytes ≈ 10.4 GiB.
  const TimedRun t = guarded("compile '" + conjunction_of(10000) + "'");
  expect_quick_refusal(
      t, {"d_model 2e+04", "1e+04 layers", "about 1.6e+09 numbers", "at least 10.4 GiB"});
  // The formula (about 69,000 characters) is shortened in the message.
  CHECK(t.run.err.size() < 1000);
}

TEST_CASE("compile: a model run would refuse is not written (281 MB, refused by run after 9.8 s)",
          "[cli][budgets]") {
  // a0 & ... & a1999: d_model = 4 + 2000 + 1999 = 4003, 1999 layers: 4003·5 + 5·4003·1999 +
  // 8007·1999 + 4003·1999 = 64037990 ≈ 6.4e7 numbers > 2^24 = 16777216, and at least
  // 16·(2·4003·1999) + 24·(1999 + 4003·1999) = 448159808 bytes ≈ 427 MiB of spec > 64 MiB.
  const std::string out = temp_path("conj2000.json");
  expect_quick_refusal(guarded("compile '" + conjunction_of(2000) + "' --out " + out),
                       {"d_model 4e+03", "about 6.4e+07 numbers", "at least 427 MiB", "64 MiB"});
  CHECK_FALSE(std::filesystem::exists(out));
  // A small conjunction still compiles and is written (d_model 2 + 2 + 1 = 5, one layer).
  const std::string small = temp_path("conj2.json");
  const Run ok = run("compile 'a0 & a1' --alphabet a0,a1 --out " + small);
  INFO(ok.err);
  CHECK(ok.code == 0);
  CHECK(std::filesystem::exists(small));
  std::filesystem::remove(small);
}

TEST_CASE("accumulate: --terms 10^6 --keys 4096 is refused by its memory (it grew past 7.6 GB)",
          "[cli][budgets]") {
  // Both values are inside the documented ranges, but the query and the 4096 keys are
  // 10^6·(4096 + 1) Values of 24 bytes = 9.8328e10 bytes, + 3 accumulators · 10^6 · 64 bytes
  // = 1.92e8: 9.852e10 bytes = 91.75 GiB, beyond the default budget of 8 GiB.
  expect_quick_refusal(guarded("accumulate --terms 1000000 --keys 4096"),
                       {"--terms x --keys", "91.8 GiB", "8 GiB", "--allow-slow"});
  // The default case is far inside: 4096·8·4 = 131072 products, 4096·9·24 bytes.
  const Run ok = run("accumulate --keys 2 --terms 64");
  CHECK(ok.code == 0);
}

TEST_CASE("classify --model: 10^6 random words of length 10^5 are refused (they ran on)",
          "[cli][budgets]") {
  // The test words alone hold 10^6·(10^5 + 1) letters of 8 bytes + 1 answer byte each:
  // 9.00009e11 bytes (+ 1024 exhaustive words of length 10, 101376 bytes, + one run of length
  // 10^5 through P a's model, d_model 6, 1 layer: 100002·6·64·2 = 7.68e7 bytes) = 838.27 GiB,
  // beyond the 8 GiB budget (before any word is run).
  const std::string model = temp_path("classify_budget_model.json");
  REQUIRE(run("compile 'P a' --format fp16 --out " + model).code == 0);
  expect_quick_refusal(
      guarded("classify --model " + model + " --random-words 1000000 --random-length 100000"),
      {"--random-words x --random-length", "838 GiB", "--allow-slow"});
  // The defaults (100 words of length 100) still extract P a: 2 states, LTL[P].
  const Run ok = run("classify --model " + model);
  INFO(ok.err);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("minimal DFA  2 states") != std::string::npos);
  std::filesystem::remove(model);
}

TEST_CASE("plot: a gnuplot that never exits is stopped after the timeout, one line, no file",
          "[cli][budgets]") {
  // A fake gnuplot first on PATH that sleeps (and does not exec: the sleep is its child, killed
  // with its process group). ROPESIM_GNUPLOT_TIMEOUT=1 instead of the default 60 s.
  const std::string dir = temp_path("hanging_gnuplot");
  std::filesystem::create_directories(dir);
  write_script(dir + "/gnuplot", "#!/bin/sh\nsleep 1000\n");
  const std::string svg = temp_path("hang.svg");
  const TimedRun t =
      guarded("plot rotations --schedules periodic:m=4 --formats fp16 --positions 8 --out " + svg,
              "PATH=" + dir + ":$PATH ROPESIM_GNUPLOT_TIMEOUT=1");
  expect_quick_refusal(t, {"gnuplot", "did not finish within 1 s", "ROPESIM_GNUPLOT_TIMEOUT"});
  CHECK(t.seconds >= 1);
  CHECK_FALSE(std::filesystem::exists(svg));
  // A bad timeout is refused before anything is computed.
  expect_quick_refusal(
      guarded("plot rotations --schedules periodic:m=4 --formats fp16 --positions 8 --out " + svg,
              "ROPESIM_GNUPLOT_TIMEOUT=0"),
      {"ROPESIM_GNUPLOT_TIMEOUT='0'", "1..999999"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("plot: a failing gnuplot is one line naming gnuplot, not 'internal error'",
          "[cli][budgets]") {
  const std::string dir = temp_path("failing_gnuplot");
  std::filesystem::create_directories(dir);
  const std::string svg = temp_path("fail.svg");
  const std::string plot =
      "plot rotations --schedules periodic:m=4 --formats fp16 --positions 8 --out " + svg;
  // Exit status 3 with an error line, as gnuplot prints it.
  write_script(dir + "/gnuplot",
               "#!/bin/sh\necho '         line 3: unknown terminal type' >&2\nexit 3\n");
  expect_quick_refusal(
      guarded(plot, "PATH=" + dir + ":$PATH"),
      {"gnuplot", "failed with exit status 3", "unknown terminal type", "no figure written"});
  CHECK_FALSE(std::filesystem::exists(svg));
  // Success without a figure.
  write_script(dir + "/gnuplot", "#!/bin/sh\nexit 0\n");
  expect_quick_refusal(guarded(plot, "PATH=" + dir + ":$PATH"),
                       {"gnuplot", "without writing the figure"});
  // Killed by a signal.
  write_script(dir + "/gnuplot", "#!/bin/sh\nkill -9 $$\n");
  expect_quick_refusal(guarded(plot, "PATH=" + dir + ":$PATH"), {"gnuplot", "killed by signal 9"});
  CHECK_FALSE(std::filesystem::exists(svg));
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "construct offset: a large --k is refused by the model's size before the horizon is computed",
    "[cli][budgets]") {
  // Found with the cases above: --k 1000000 (inside horizon's range 1..10^6) ran past 30 s and
  // 3.2 GB, and --k 1000 wrote nothing only after 16 s and 3.4 GB (a 376 MiB spec). The model
  // (proofs/experiments/offset_simulation.hpp) has d_model 5 + 2k and k + 1 layers: for k = 10^6,
  // d = 2000005 ≈ 2e6 and 1000001 ≈ 1e6 layers.
  expect_quick_refusal(
      guarded("construct offset --g 1 --k 1000000 --format fp16 --out " + temp_path("off.json")),
      {"--k 1000000", "d_model 2e+06", "1e+06 layers", "64 MiB"});
  // k = 1000: d = 2005, 1001 layers; heads: the Y^1000 head (head_dim 2) and 1000 P heads
  // (head_dim 1), value_dim 1 each: head_dims 1002, value_dims 1001, hidden 2001. Count:
  // 2005·5 + 5·2005·1001 + 2·2006·1002 + 4011·1001 + 4011·2001 + 2005·1001 = 28113101 ≈ 2.81e7.
  expect_quick_refusal(guarded("construct offset --g 1 --k 1000 --format fp32"),
                       {"--k 1000", "d_model 2e+03", "about 2.81e+07 numbers"});
  // Small k still builds: k = 1 gives d_model 7 (the docs' example).
  const Run ok = run("construct offset --g 1 --k 1 --format fp16");
  INFO(ok.err);
  CHECK(ok.code == 0);
}

TEST_CASE("compile: Y^1000 is 1000 layers, refused at once in every format", "[cli][budgets]") {
  // Y^k = one offset head gated by P^k true, k P heads one layer each: 1001 layers and
  // 2.81e7 numbers as construct offset --k 1000 above. fp32 refused after 37 s and 748 MB and
  // fp16 ran on before the estimate.
  for (const char* format : {"fp32", "fp16", "bf16"}) {
    expect_quick_refusal(guarded(std::string("compile 'Y^1000 a' --format ") + format + " -o " +
                                 temp_path("y1000.json")),
                         {"Y^1000 is one offset head gated by a chain of 1000 P-head layers",
                          "1e+03 layers", "about 2.81e+07 numbers"});
  }
}

TEST_CASE("compile: --certify 10^6 in fp32 is refused by its work (hours) unless --allow-slow",
          "[cli][budgets]") {
  // Found with the cases above: the P-head certificate recomputes h(c) as a sum of c terms while
  // Z_c = c is exact (c <= 2^24 in fp32), so --certify N costs N(N+1)/2 additions: 30000 took
  // 6 s. N = 10^6: 5.000005e11 additions at 7.5e7/s = 6667 s ≈ 1.9 h > 10 min.
  expect_quick_refusal(guarded("compile 'P a' --format fp32 --certify 1000000"),
                       {"--certify", "5e+11 additions", "1.9 h", "--allow-slow"});
  // fp16: Z stagnates at 2^11 = 2048, so the same --certify costs 2048·2049/2 + (10^6 - 2048)
  // ≈ 3.1e6 additions and compiles (the certificate covers every length).
  const TimedRun ok = guarded("compile 'P a' --format fp16 --certify 1000000");
  INFO(ok.run.err);
  CHECK(ok.run.code == 0);
  CHECK(ok.run.out.find("(any length)") != std::string::npos);
}

TEST_CASE("horizon --simulate: a large k is refused from the model's shape, which is not built",
          "[cli][budgets]") {
  // The simulation check's estimate used to build the Y^k model to count its work: for
  // k = 10^5 that is d_model 200005 and 100001 layers, 5·d·L ≈ 1e11 numbers (2.4e12 bytes as
  // Values). It is now estimated from proofs::offset_model_shape; one run of a word of n letters
  // alone holds n·d·64·(L + 1) ≈ n·1.28e12 bytes, beyond even the hard limit of 2^50 bytes that
  // --allow-slow does not lift.
  expect_quick_refusal(guarded("horizon --g 1 --k 100000 --format fp16 --simulate"),
                       {"--simulate", "bytes of memory", "reduce the sizes"});
}

TEST_CASE("run: a 59 MiB model spec over 2^24 numbers is refused before it is parsed",
          "[cli][budgets]") {
  // d_model 4096 and one head of head_dim 3800 whose query matrix is written out: 3800 rows of
  // 4096 "0" strings, 62 267 240 bytes (inside the 64 MiB input limit). The model holds about
  // 2·(4096 + 1)·3800 + ... ≈ 3.12e7 numbers > 2^24. Parsed whole first, such a spec took 11.6 s
  // and 1.76 GB before the refusal; the dimensions are now read by one SAX pass over the text,
  // so the refusal fits in an address space of 4× the file (ulimit -v, outside ASan).
  const std::string path = temp_path("spec59.json");
  {
    std::string row = "[";
    for (int c = 0; c < 4096; ++c) row += c ? ",\"0\"" : "\"0\"";
    row += "]";
    std::ofstream out(path, std::ios::binary);
    out << R"({"ropesim_model":1,"policy":{"format":"fp16"},"architecture":{"masking":"strict"},)"
        << R"("d_model":4096,"alphabet":["a","b"],"embedding":"zeros","layers":[{"heads":[)"
        << R"({"head_dim":3800,"name":"big","key":"zeros","value_dim":1,"value":"zeros",)"
        << R"("output":"zeros","query":[)";
    for (int r = 0; r < 3800; ++r) out << (r ? "," : "") << row;
    out << R"(]}]}],"classifier":{"weights":"zeros"}})";
  }
  const auto bytes = std::filesystem::file_size(path);
  REQUIRE(bytes > 59u * 1048576);
  std::string limit = memory_limit().empty()
                          ? std::string()
                          : "ulimit -v " + std::to_string(4 * bytes / 1024) + "; ";
  const Run r =
      run_binary("timeout 60 " + std::string(ROPESIM_BINARY), "run " + path + " --input ab", limit);
  std::filesystem::remove(path);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("3.12e+07 numbers") != std::string::npos);
  CHECK(r.err.find("--allow-large") != std::string::npos);
}

TEST_CASE("horizon, compile: a head of 32768 rotary blocks is refused at once unless --allow-slow",
          "[cli][budgets]") {
  // conventional:base=10000,dim=65536 has 32768 blocks, beyond kHorizonQuickBlocks = 4096:
  // horizon ran past 150 s (its estimate alone for minutes) and compile 'P(b & Y^3 a)' past 30 s.
  const std::string schedule = "--schedule conventional:base=10000,dim=65536";
  expect_quick_refusal(
      guarded("horizon " + schedule + " --k 3 --C auto --format fp32"),
      {"--schedule", "32768 rotary blocks", "quick limit of 4096", "--allow-slow"});
  expect_quick_refusal(
      guarded("compile 'P(b & Y^3 a)' " + schedule + " -o " + temp_path("wide.json")),
      {"--schedule", "32768 rotary blocks", "--allow-slow"});
  CHECK_FALSE(std::filesystem::exists(temp_path("wide.json")));
}

TEST_CASE("horizon --C auto: L = 10^9 on llama3-8b is refused in seconds with its estimate",
          "[cli][budgets]") {
  // The estimate scanned S(n) of the 64 blocks to L for the record distances and each
  // candidate's δ bound: 2 min 31 s of CPU before this refusal (151 s > the guard's 60 s).
  // Now about 1.4 s of CPU (the scans capped at 2^23 offsets): 20 s of wall time allows a
  // loaded CI machine and still fails the old behaviour.
  expect_quick_refusal(
      guarded("horizon --schedule llama3-8b --format bf16 --k 1 --C auto "
              "--max-length 1000000000"),
      {"L = 1000000000", "beyond the candidate algorithm's quick limit", "pass --allow-slow"}, 20);
}
