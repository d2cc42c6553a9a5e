// Compile certificates and their model: `ropesim compile FORMULA -o MODEL.json --certificate
// CERT.json` and `ropesim-verify CERT.json MODEL.json` (verify/compile_check.inc). Every
// certificate the docs' formulas give is accepted with its model; each forgery of issue 33 (the
// subject changed: heads, evidence, formula, alphabet, the model) is rejected naming the item,
// or refused; the model's hash is recomputed here by coreutils' sha256sum (an independent
// SHA-256).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump(1) << "\n";
}

std::string hex(double d) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", d);
  return buffer;
}

/// SHA-256 of a file by coreutils' sha256sum (not the library ropesim and the verifier use).
std::string sha256sum(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(("sha256sum '" + path + "'").c_str(), "r"), pclose);
  REQUIRE(p);
  std::array<char, 65> digest{};
  REQUIRE(std::fread(digest.data(), 1, 64, p.get()) == 64);
  return std::string(digest.data(), 64);
}

/// A compiled model and its certificate (paths), compiled once per test case.
struct Compiled {
  std::string model, certificate;
  nlohmann::json m, c;
};

Compiled compile(const std::string& formula, const std::string& flags, const std::string& name) {
  Compiled out{temp_path(name + "_model.json"), temp_path(name + "_cert.json"), {}, {}};
  const Run made = run("compile '" + formula + "' --alphabet ab " + flags + " -o " + out.model +
                       " --certificate " + out.certificate);
  INFO(made.err);
  REQUIRE(made.code == 0);
  out.m = read_json(out.model);
  out.c = read_json(out.certificate);
  return out;
}

Run verify(const std::string& certificate, const std::string& model) {
  return run_binary(ROPESIM_VERIFY_BINARY, certificate + " " + model);
}

void expect_valid(const Compiled& x) {
  const Run v = verify(x.certificate, x.model);
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  CHECK(v.out == "VALID\n");
}

/// Writes the certificate `c` (with `model_path`) and expects exit `code` (1: "INVALID: …"
/// on stdout; 2: one line on stderr) with `item` in the message.
void expect_rejected(const nlohmann::json& c, const std::string& model_path,
                     const std::string& name, const std::string& item, int code = 1) {
  const std::string path = temp_path(name);
  write_json(path, c);
  const Run r = verify(path, model_path);
  INFO(name << ": " << r.out << r.err);
  CHECK(r.code == code);
  if (code == 1) {
    CHECK(r.out.rfind("INVALID: ", 0) == 0);
    CHECK(r.out.find(item) != std::string::npos);
  } else {
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(item) != std::string::npos);
  }
  std::filesystem::remove(path);
}

/// The model `x.m` edited by `edit`, written to a new file; with `rehash` the certificate's
/// model_sha256 is that file's (so only the recomputed evidence can catch the edit). Expects
/// rejection naming `item`.
template <class Edit>
void expect_model_rejected(const Compiled& x, const std::string& name, Edit edit, bool rehash,
                           const std::string& item, int code = 1) {
  nlohmann::json m = x.m;
  edit(m);
  const std::string model = temp_path(name + "_model.json");
  std::ofstream(model) << m.dump(2) << "\n";
  nlohmann::json c = x.c;
  if (rehash) c["model_sha256"] = sha256sum(model);
  expect_rejected(c, model, name + "_cert.json", item, code);
  std::filesystem::remove(model);
}

void remove(const Compiled& x) {
  std::filesystem::remove(x.model);
  std::filesystem::remove(x.certificate);
}

}  // namespace

TEST_CASE("a compile certificate names its model file by SHA-256 and is refused without it",
          "[verify]") {
  const Compiled x = compile("P a", "--format fp16", "compile_hash");
  CHECK(x.c["model_sha256"] == sha256sum(x.model));
  expect_valid(x);
  // without MODEL.json: exit 2, one line
  const Run alone = run_binary(ROPESIM_VERIFY_BINARY, x.certificate);
  expect_usage_error(alone, "a compile certificate is checked against its model");
  // a model file given with a certificate of another kind
  const std::string census = temp_path("compile_hash_census.json");
  REQUIRE(run("rotations --schedule single:g=1 --positions 8 --certificate " + census).code == 0);
  expect_usage_error(verify(census, x.model), "MODEL.json is read with a compile certificate only");
  std::filesystem::remove(census);
  // compile --certificate needs --out (the certificate is about the model file)
  const std::string path = temp_path("compile_hash_noout.json");
  expect_usage_error(run("compile 'P a' --format fp16 --certificate " + path),
                     "--certificate needs --out MODEL.json");
  CHECK(!std::filesystem::exists(path));
  // a model edited after compiling: the hash no longer matches
  expect_model_rejected(
      x, "compile_hash_edited", [](nlohmann::json& m) { m["classifier"]["bias"] = "-0.25"; }, false,
      "model_sha256");
  // ... and with the hash updated in the certificate, the classifier is recomputed: accept iff
  // the root is 1 needs the bias in (-1, 0]: -0.25 is still right (VALID), +0.5 is not
  {
    nlohmann::json m = x.m;
    m["classifier"]["bias"] = "-0.25";
    const std::string model = temp_path("compile_hash_bias.json");
    std::ofstream(model) << m.dump(2) << "\n";
    nlohmann::json c = x.c;
    c["model_sha256"] = sha256sum(model);
    const std::string cert = temp_path("compile_hash_bias_cert.json");
    write_json(cert, c);
    const Run v = verify(cert, model);
    INFO(v.out << v.err);
    CHECK(v.out == "VALID\n");
    std::filesystem::remove(model);
    std::filesystem::remove(cert);
  }
  expect_model_rejected(
      x, "compile_hash_bias_bad", [](nlohmann::json& m) { m["classifier"]["bias"] = "0.5"; }, true,
      "classifier: y = ");
  remove(x);
}

TEST_CASE("issue 33's compile forgeries are rejected", "[verify]") {
  const Compiled ya = compile("Y a", "--format fp16", "forge_ya");
  const Compiled pa = compile("P a", "--format fp32 --certify 300", "forge_pa");
  const Compiled m97 = compile("mod(97,3) & P a", "--format fp32 --certify 50", "forge_m97");
  expect_valid(ya);
  expect_valid(pa);
  expect_valid(m97);
  // Y a (fp16): the model's Y^1 head certifies length 43 (the model is wrong at 44)
  REQUIRE(ya.c["certified_length"] == 43);
  auto c = ya.c;
  c["bounded_heads"] = nlohmann::json::array();
  c["certified_length"] = nullptr;
  expect_rejected(c, ya.model, "forge_ya_unbounded.json",
                  "layer 1 head 0 (Y^k head): no bounded_heads entry covers it");
  // P a (fp32): past set to null
  c = pa.c;
  c["past"] = nullptr;
  expect_rejected(c, pa.model, "forge_pa_past.json",
                  "layer 0 head 0 (P head): the certificate's past is null");
  // another head's horizon certificate transplanted into Y a, with its n_max as the length:
  // fp64 g = 1 (at the limit 10000), and an fp16 head with C = 64
  const std::string h64 = temp_path("forge_h64.json"), h16 = temp_path("forge_h16.json");
  REQUIRE(run("horizon --g 1 --k 1 --format fp64 --max-length 10000 --quiet --certificate " + h64)
              .code == 0);
  REQUIRE(
      run("horizon --g 1 --k 1 --format fp16 --C 64 --max-length 10 --quiet --certificate " + h16)
          .code == 0);
  c = ya.c;
  c["bounded_heads"][0]["horizon"] = read_json(h64);
  REQUIRE(c["bounded_heads"][0]["horizon"]["n_max"] == 10000);
  c["certified_length"] = 10000;
  expect_rejected(c, ya.model, "forge_ya_h64.json", "layer 1 head 0 (Y^k head)");
  c = ya.c;
  c["bounded_heads"][0]["horizon"] = read_json(h16);
  c["certified_length"] = c["bounded_heads"][0]["horizon"]["n_max"];
  expect_rejected(c, ya.model, "forge_ya_h16.json",
                  "the model's query bias (0x4.6cp+8, -0x6.e4p+8) is not its horizon");
  std::filesystem::remove(h64);
  std::filesystem::remove(h16);
  // the formula changed: to one the compiler refuses in bf16, to one with S, to another atom
  c = m97.c;
  c["formula"] = "mod(64,63) & P b";
  expect_rejected(c, m97.model, "forge_m97_formula.json",
                  "formula: the model computes &(P(a),mod(97,3)), the formula reads "
                  "&(P(b),mod(64,63))");
  c = pa.c;
  c["formula"] = "a S b";
  expect_rejected(c, pa.model, "forge_pa_since.json", "formula: S is not in LTL[P,MOD]");
  c = pa.c;
  c["formula"] = "P b";
  expect_rejected(c, pa.model, "forge_pa_pb.json", "formula: the model computes P(a)");
  c = pa.c;
  c["formula"] = "P (a";
  expect_rejected(c, pa.model, "forge_pa_syntax.json", "formula: column 5: expected ')'");
  // the alphabet changed
  c = pa.c;
  c["alphabet"] = {"a", "b", "c"};
  expect_rejected(c, pa.model, "forge_pa_abc.json", "alphabet: the model's is [\"a\",\"b\"]");
  // a MOD head's evidence deleted
  c = m97.c;
  c["mod_heads"] = nlohmann::json::array();
  expect_rejected(c, m97.model, "forge_m97_nomod.json",
                  "layer 0 head 0 (MOD head): no MOD evidence with m = 97");
  // evidence for a head the model does not have: a second copy of the MOD entry
  c = m97.c;
  c["mod_heads"].push_back(c["mod_heads"][0]);
  expect_rejected(c, m97.model, "forge_m97_extra.json", "mod_heads: MOD_97^3 is not a head");
  remove(ya);
  remove(pa);
  remove(m97);
}

TEST_CASE("a model edited after compiling is caught by the evidence recomputed from it",
          "[verify]") {
  const Compiled ya = compile("Y a", "--format fp16", "edit_ya");
  const Compiled m97 = compile("mod(97,3) & P a", "--format fp32 --certify 50", "edit_m97");
  const Compiled ab =
      compile("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", "--format fp16", "edit_ab");
  expect_valid(ab);
  // the MOD head's C (its BOS key): the key weight round(C·b̂) no longer matches
  expect_model_rejected(
      m97, "edit_m97_C",
      [](nlohmann::json& m) { m["layers"][0]["heads"][0]["key"][0][0] = "1000"; }, true,
      "(MOD head): MOD_97^3 head: key weight round(C*b^) is");
  // the MOD head's query bias: a residue's realised scores no longer the listed ones
  expect_model_rejected(
      m97, "edit_m97_q",
      [](nlohmann::json& m) { m["layers"][0]["heads"][0]["query_bias"][1] = "0.25"; }, true,
      "(MOD head): MOD_97^3 head: query bias is");
  // the Y^1 head's query bias doubled: not the head its horizon certificate measured
  expect_model_rejected(
      ya, "edit_ya_q",
      [](nlohmann::json& m) {
        auto& q = m["layers"][1]["heads"][0]["query_bias"][0];
        q = std::to_string(2 * std::stod(q.get<std::string>()));
      },
      true, "(Y^k head): the model's query bias");
  // the P head's key weight 1 instead of f_large: its realised score leads by 1 only
  expect_model_rejected(
      m97, "edit_m97_p",
      [](nlohmann::json& m) {
        for (auto& h : m["layers"][0]["heads"])
          if (!h.contains("rope"))
            for (auto& v : h["key"][0])
              if (v != "0") v = "1";
      },
      true, "(P head): its key weight must be f_large");
  // a Boolean FFN weight halved: the gadget gives 1/2 on a 0/1 input
  expect_model_rejected(
      ab, "edit_ab_ffn",
      [](nlohmann::json& m) {
        auto& w1 = m["layers"][m["layers"].size() - 1]["ffn"]["w1"];
        for (auto& row : w1)
          for (auto& v : row)
            if (v == "-1") {
              v = "-0.5";
              return;
            }
      },
      true, "FFN output 16: gives 0x8p-4, not 0/1, on a 0/1 input");
  // the MOD head moved to a non-periodic schedule (llama2-7b under r1): refused, exit 2
  expect_model_rejected(
      m97, "edit_m97_llama",
      [](nlohmann::json& m) {
        m["layers"][0]["heads"][0]["rope"][0] = {
            {"schedule", "llama2-7b"}, {"realisation", "r1"}, {"layout", "adjacent"}};
      },
      true, "MOD head on a non-periodic schedule: not covered by this verifier yet", 2);
  remove(ya);
  remove(m97);
  remove(ab);
}

TEST_CASE("compile certificates of the docs' formulas are accepted; a changed constant is not",
          "[verify]") {
  // docs/GUIDE.md: (ab)* in fp16 — two MOD_2 heads and a P head
  const Compiled x =
      compile("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", "--format fp16", "compile_ab");
  const auto& c = x.c;
  CHECK(c["certificate"] == "compile");
  REQUIRE(c["mod_heads"].size() >= 1);
  CHECK(c["mod_heads"][0]["m"] == 2);
  // b_2 = (1 + cos π)/2 = 0 and T(1) = (−1, 0): the constants THEORY §7 C4 gives for m = 2
  CHECK(c["mod_heads"][0]["b"] == "0x0p+0");
  CHECK(!c["past"].is_null());
  expect_valid(x);
  // one bit of a MOD head's C: its BOS scores and margins change
  auto tampered = c;
  const double C = std::strtod(c["mod_heads"][0]["C"].get<std::string>().c_str(), nullptr);
  tampered["mod_heads"][0]["C"] = hex(C + std::ldexp(1.0, std::ilogb(C) - 10));
  expect_rejected(tampered, x.model, "compile_ab_C.json", "MOD_2^");
  // a P-head count one larger than the re-binarisation allows
  tampered = c;
  if (c["past"]["certified_count"].is_null()) {
    tampered["past"]["certified_count"] = 5;
  } else {
    tampered["past"]["certified_count"] = c["past"]["certified_count"].get<std::uint64_t>() + 1;
  }
  expect_rejected(tampered, x.model, "compile_ab_past.json", "P head: the certified count is");
  remove(x);
}

TEST_CASE("a compile certificate with a Y^k head carries its certified range", "[verify]") {
  // Σ*a = Y a in fp16: the Y^1 head on g = 1 with C = auto certifies N_max^(1) (THEORY §6)
  const std::string model = temp_path("compile_ya_model.json");
  const std::string path = temp_path("compile_ya.json");
  const Run made = run("compile 'Y a' --alphabet ab --format fp16 --json -o " + model +
                       " --certificate " + path);
  REQUIRE(made.code == 0);
  const auto report = nlohmann::json::parse(made.out);
  const auto c = read_json(path);
  REQUIRE(c["bounded_heads"].size() == 1);
  CHECK(c["certified_length"] == report["certified_length"]);
  CHECK(c["bounded_heads"][0]["horizon"]["n_max"] == report["certified_length"]);
  const Run v = verify(path, model);
  INFO(v.err);
  CHECK(v.code == 0);
  CHECK(v.out == "VALID\n");
  auto tampered = c;
  tampered["certified_length"] = c["certified_length"].get<std::uint64_t>() + 1;
  expect_rejected(tampered, model, "compile_ya_length.json", "certified_length");
  tampered = c;
  tampered["bounded_heads"][0]["horizon"]["queries"][3]["target"] = hex(1);
  expect_rejected(tampered, model, "compile_ya_score.json", "Y^1 head");
  std::filesystem::remove(path);
  std::filesystem::remove(model);
}

TEST_CASE("compile --certificate refuses the LayerNorm mirror in one line and writes nothing",
          "[verify]") {
  const std::string path = temp_path("compile_ln.json");
  const std::string model = temp_path("compile_ln_model.json");
  expect_usage_error(run("compile 'P(a & !P true)' --format fp16 --layer-norm -o " + model +
                         " --certificate " + path),
                     "--certificate: a certificate covers models without --layer-norm");
  CHECK(!std::filesystem::exists(path));
  CHECK(!std::filesystem::exists(model));
}

TEST_CASE("ropesim-verify reads a margin in exact_decimal's scientific spelling", "[verify]") {
  // numeric::exact_decimal writes tiny or round values as "5.9604644775390625e-8" / "1e6"; the
  // checker must read that spelling as the same rational, and a changed exponent is a
  // different margin.
  const Compiled x =
      compile("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", "--format fp16", "compile_sci");
  const std::string& path = x.certificate;
  auto c = x.c;
  REQUIRE(c["mod_heads"].size() >= 1);
  auto& margin = c["mod_heads"][0]["margins"][0]["margin"];
  REQUIRE(margin.is_string());
  // "d.ddd" as "dddde-3", the same rational
  const std::string original = margin.get<std::string>();
  std::string text = original;
  const auto point = text.find('.');
  const std::size_t after = point == std::string::npos ? 0 : text.size() - point - 1;
  if (point != std::string::npos) text.erase(point, 1);
  margin = text + "e-" + std::to_string(after);
  write_json(path, c);
  const Run v = verify(path, x.model);
  INFO(margin << "\n" << v.out << v.err);
  CHECK(v.code == 0);
  margin = text + "e-" + std::to_string(after + 1);  // ten times smaller
  expect_rejected(c, x.model, "compile_sci_bad.json", "margin");
  // a leading zero changes no decimal: "017.34375" is 17.34375 (GMP's base 0 read it as octal)
  margin = "0" + original;
  write_json(path, c);
  const Run leading_zero = verify(path, x.model);
  INFO(margin << "\n" << leading_zero.out << leading_zero.err);
  CHECK(leading_zero.code == 0);
  margin = text + "e-x";
  write_json(path, c);
  const Run unreadable = verify(path, x.model);
  CHECK(unreadable.code == 2);
  CHECK(unreadable.err.find("is not an exact decimal") != std::string::npos);
  remove(x);
}

TEST_CASE("a Y^k head on a conventional schedule: its angles recomputed from the definition",
          "[verify]") {
  // conventional:base=100,dim=4: θ_0 = 1, θ_1 = 100^(-2/4) = 1/10 (RoFormer), equal weights 1/2
  const Compiled x =
      compile("Y a", "--format bf16 --schedule conventional:base=100,dim=4", "conv_ya");
  const auto& hz = x.c["bounded_heads"][0]["horizon"];
  CHECK(hz["blocks"] == nlohmann::json::parse(R"([{"theta": "1"}, {"theta": "1/10"}])"));
  expect_valid(x);
  // a block's angle changed in the horizon certificate: 1/9 is not 100^(-1/2)
  auto c = x.c;
  c["bounded_heads"][0]["horizon"]["blocks"][1]["theta"] = "1/9";
  expect_rejected(c, x.model, "conv_ya_theta.json",
                  "block 1 is not conventional:base=100,dim=4's θ = 100^(-1/2)");
  // the same angle spelled as a power is accepted by the binding (10000^(-1/4) = 1/10)
  c = x.c;
  c["bounded_heads"][0]["horizon"]["blocks"][1]["theta"] = "10000^(-1/4)";
  {
    const std::string path = temp_path("conv_ya_power.json");
    write_json(path, c);
    const Run v = verify(path, x.model);
    INFO(v.out << v.err);
    // the binding accepts it; the horizon check then rounds 10000^(-1/4) by Ziv as it does 1/10
    CHECK(v.out.find("is not conventional") == std::string::npos);
    std::filesystem::remove(path);
  }
  // the model's schedule changed (hash updated): not its horizon certificate's schedule
  expect_model_rejected(
      x, "conv_ya_base",
      [](nlohmann::json& m) {
        m["layers"][1]["heads"][0]["rope"][0]["schedule"] = "conventional:base=1000,dim=4";
      },
      true, "its horizon certificate is for \"conventional:base=100,dim=4\"");
  // a schedule the verifier has no definition of (model and certificate both relabelled):
  // refused, exit 2
  Compiled relabelled = x;
  relabelled.m["layers"][1]["heads"][0]["rope"][0]["schedule"] = "llama2-7b";
  relabelled.c["bounded_heads"][0]["horizon"]["schedule"] = "llama2-7b";
  expect_model_rejected(
      relabelled, "conv_ya_llama", [](nlohmann::json&) {}, true,
      "schedule llama2-7b: its angles are not recomputed by this verifier yet", 2);
  remove(x);
}

TEST_CASE("compile certificates of more formulas verify against their models", "[verify]") {
  // every gadget kind: Y^2 and its gate P^2⊤, a P of a conjunction with a Y, constants (true
  // read by the classifier from top; mod(1,0) ∨ b, a disjunction with top, is constant 1), a
  // MOD_3 atom under a negated disjunction, nested P with !P true
  int n = 0;
  for (const std::string formula : {"Y^2 a | !P(b & Y a)", "true", "false", "mod(1,0) | b",
                                    "!(a | b) & mod(3,2)", "P(a & !P true)"}) {
    INFO(formula);
    const Compiled x = compile(formula, "--format fp16", "more_" + std::to_string(n++));
    expect_valid(x);
    remove(x);
  }
  // the constant true model does not compute false
  const Compiled t = compile("true", "--format fp16", "more_true");
  auto c = t.c;
  c["formula"] = "false";
  expect_rejected(c, t.model, "more_true_false.json", "the model computes T, the formula reads F");
  remove(t);
  // a format spelled by its parameters: covered by name only, refused (exit 2)
  const Compiled p = compile("P a", "--format p=11,e=5", "more_custom");
  expect_rejected(p.c, p.model, "more_custom.json", "format p=11,e=5: a model's format is covered",
                  2);
  remove(p);
}
