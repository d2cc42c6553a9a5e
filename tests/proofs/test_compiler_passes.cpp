// The compiler's passes and components one by one (THEORY §7 C1, C4, C5;
// proofs/compiler/compiler.hpp "Passes"). Expectations are derived by hand, not by running the
// compiler:
//   - the layer plan of P(a & !P true) and Y^2 b by ASAP placement on paper;
//   - f_large(fp16) = 17.34375 = 555/32: the smallest x in fp16 with round(exp(−x)) = 0 under
//     nearest-even is the first element of F above 25·ln 2 = 17.3287 (exp(−x) must not exceed
//     half the smallest subnormal 2^−24), on the grid 2^−6 of [16, 32);
//   - the P-head certificate in fp16 stagnates at count 2049: Z_c = c is exact up to 2048 and
//     2048 + 1 ties to even 2048, so α = 2^−11 from there; h(2048) = 2048·2^−11 = 1 exactly and
//     1 + 2^−11 ties to even 1 (ulp(1) = 2^−10);
//   - the MOD_2^r head in fp16: δ_2 = 2, so C_0 = 2·f_large/δ_2 = f_large = 17.34375; b_2 = 0
//     makes every non-BOS key score 0 and BOS score ±C, so every residue's lead is exactly C;
//   - the Y^1 head on single:g=1 in fp16 certifies N_max = 43 (docs/CLI.md, `P(b & Y a)`);
//   - Boolean gadgets against their truth tables.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "proofs/compiler/boolean_component.hpp"
#include "proofs/compiler/compiler_assemble.hpp"
#include "proofs/compiler/compiler_report.hpp"
#include "proofs/compiler/layer_plan.hpp"
#include "proofs/compiler/mod_component.hpp"
#include "proofs/compiler/offset_component.hpp"
#include "proofs/compiler/past_component.hpp"
#include "proofs/range/fixed_offset_head.hpp"

using namespace ropesim;
using numeric::Format;

namespace {

attention::EvaluationPolicy fp16_policy() {
  attention::EvaluationPolicy p;
  p.format = Format::fp16();
  return p;
}

mpq_class q(const numeric::Value& v) { return attention::exact_rational(v); }

std::vector<std::size_t> sizes(const std::vector<std::vector<ltl::NodeId>>& layers) {
  std::vector<std::size_t> s;
  for (const auto& l : layers) s.push_back(l.size());
  return s;
}

}  // namespace

TEST_CASE("plan: P(a & !P true) takes four layers over ten named coordinates",
          "[compiler][passes]") {
  // Layer 0: P true (⊤ is ready); 1: !P true; 2: a & !P true; 3: P(a & !P true).
  const proofs::LayerPlan plan = proofs::plan_layers(ltl::parse("P(a & !P true)"), {"a", "b"});
  CHECK(plan.layers() == 4);
  CHECK(sizes(plan.heads) == std::vector<std::size_t>{1, 0, 0, 1});
  CHECK(sizes(plan.boolean) == std::vector<std::size_t>{0, 1, 1, 0});
  CHECK(plan.has_past);
  CHECK(plan.gates.empty());
  // bos, top, sym:a, sym:b, then a coordinate per computed node and a raw one per P node.
  CHECK(plan.space.size() == 4 + 2 + 1 + 1 + 2);
  CHECK(plan.space.names()[0] == "bos");
  CHECK(plan.space.names()[1] == "top");
  CHECK(plan.space.contains("count") == false);
  const ltl::NodeId root = plan.formula.root();
  CHECK(plan.node_coordinates[root] == "f" + std::to_string(root) + ":P(a & !P true)");
  CHECK(plan.space.contains(proofs::LayerPlan::raw(root)));
}

TEST_CASE("plan: Y^2 b waits two layers for its gate P P true", "[compiler][passes]") {
  const proofs::LayerPlan plan = proofs::plan_layers(ltl::parse("Y^2 b"), {"a", "b"});
  REQUIRE(plan.gates.size() == 1);
  CHECK(plan.layers() == 3);  // P true, then P P true, then Y^2 b
  CHECK(sizes(plan.heads) == std::vector<std::size_t>{1, 1, 1});
  CHECK(sizes(plan.boolean) == std::vector<std::size_t>{0, 0, 0});
  CHECK(plan.heads[2][0] == plan.formula.root());
  // bos top sym:a sym:b + (f, raw) for Y^2 b, P true, P P true
  CHECK(plan.space.size() == 10);
}

TEST_CASE("plan: mod(3,1) & P b adds the count coordinate; check_compilable refuses S",
          "[compiler][passes]") {
  const proofs::LayerPlan plan = proofs::plan_layers(ltl::parse("mod(3,1) & P b"), {"a", "b"});
  CHECK(plan.space.contains("count"));
  CHECK(plan.layers() == 2);  // MOD and P b in layer 0, the conjunction in layer 1
  CHECK(sizes(plan.heads) == std::vector<std::size_t>{2, 0});
  CHECK_THROWS_AS(proofs::check_compilable(ltl::parse("a S b"), {"a", "b"}), proofs::Refusal);
  CHECK_THROWS_AS(proofs::check_compilable(ltl::parse("P c"), {"a", "b"}), proofs::Refusal);
  CHECK_THROWS_AS(proofs::check_compilable(ltl::parse("P a"), {"a", "a"}), proofs::Refusal);
  CHECK_NOTHROW(proofs::check_compilable(ltl::parse("P a"), {"a", "b"}));
}

TEST_CASE("the P-head component in fp16: key weight f_large, certificate for every count",
          "[compiler][passes]") {
  const attention::EvaluationPolicy policy = fp16_policy();
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  const proofs::PastCertificate cert = proofs::certify_past_heads(policy, 100000);
  CHECK(!cert.certified_count);  // every count
  REQUIRE(cert.stagnation_count);
  CHECK(*cert.stagnation_count == 2049);
  const numeric::Value f_large = proofs::f_large_or_refuse(policy);
  CHECK(q(f_large) == mpq_class(555, 32));  // 17.34375

  const proofs::ResidualSpace space{"top", "psi", "raw", "out"};
  const auto parts = proofs::past_components(space, "psi", "raw", "out", "P psi", f_large, cert, a);
  REQUIRE(parts.size() == 2);
  const proofs::Component& head = parts[0];
  REQUIRE(head.sublayer == proofs::Sublayer::attention);
  REQUIRE(head.head);
  CHECK(q(head.head->key.at(0, space.index("psi"))) == mpq_class(555, 32));
  CHECK(q(head.head->value.at(0, space.index("psi"))) == 1);
  CHECK(q(head.head->output.at(space.index("raw"), 0)) == 1);
  CHECK(head.description.constants["key_weight"] == "17.34375");
  CHECK(head.raw_outputs.size() == 2);
  const proofs::Component& ffn = parts[1];
  CHECK(ffn.sublayer == proofs::Sublayer::feed_forward);
  CHECK(ffn.description.kind == "rebinarise");
  CHECK(ffn.units.size() == 2);  // 4·ReLU(h − ⊤/4) − 4·ReLU(h − ⊤/2)
  CHECK(ffn.description.reads == std::vector<std::string>{"raw", "top"});
  CHECK(ffn.description.writes == std::vector<std::string>{"out"});
}

TEST_CASE("the MOD component in fp16: C = f_large and every residue leads by exactly C",
          "[compiler][passes]") {
  const attention::EvaluationPolicy policy = fp16_policy();
  const proofs::ResidualSpace space{"bos", "top", "raw", "count", "out"};
  for (std::uint64_t r : {0, 1}) {
    INFO("r = " << r);
    const auto parts =
        proofs::mod_components(space, 2, r, "raw", "count", "out", "mod(2,r)", policy);
    REQUIRE(parts.size() == 2);
    REQUIRE(parts[0].mod_head);
    const proofs::ModAtomHead& h = *parts[0].mod_head;
    CHECK(h.C_exact == mpq_class(555, 32));
    CHECK(h.min_margin == mpq_class(555, 32));
    CHECK(parts[0].description.constants["C"] == "17.34375");
    // Position 1 holds mod(2,1) (1 ≡ 1), so only r = 0 needs the count to switch it off.
    const bool at_1 = r == 1;
    CHECK(parts[1].description.constants["value_at_position_1"] == (at_1 ? "1" : "0"));
    CHECK(parts[1].units.size() == (at_1 ? 1u : 2u));
  }
  const proofs::Component count =
      proofs::counting_component(space, "bos", "count", numeric::arithmetic(policy));
  REQUIRE(count.head);
  CHECK(q(count.head->value.at(0, space.index("bos"))) == 1);
  CHECK(q(count.head->output.at(space.index("count"), 0)) == 1);
}

TEST_CASE("the Y^k component in fp16: N_max^(1) = 43, and Y^50 is refused", "[compiler][passes]") {
  const attention::EvaluationPolicy policy = fp16_policy();
  const attention::Schedule schedule = attention::single_schedule(1);
  const proofs::OffsetCertificate range = proofs::certify_offset_head(1, schedule, 0, policy);
  CHECK(range.report.range.n_max == 43);
  CHECK(range.C == attention::exact_rational(range.report.C));
  const proofs::ResidualSpace space{"top", "psi", "raw", "gate", "out"};
  const auto parts = proofs::offset_components(space, "psi", "raw", "gate", "out", "Y psi", 1,
                                               schedule, range, policy);
  REQUIRE(parts.size() == 2);
  REQUIRE(parts[0].bounded_head);
  CHECK(parts[0].bounded_head->n_max == 43);
  CHECK(parts[0].bounded_head->k == 1);
  CHECK(q(parts[0].head->value.at(0, space.index("psi"))) == 1);
  CHECK(q(parts[0].head->output.at(space.index("raw"), 0)) == 1);
  // out = ReLU(raw + 2·gate − 2·⊤)
  REQUIRE(parts[1].units.size() == 1);
  CHECK(parts[1].units[0].reads.size() == 3);
  try {
    (void)proofs::certify_offset_head(50, schedule, 0, policy);
    FAIL("Y^50 was certified in fp16");
  } catch (const proofs::Refusal& e) {
    CHECK(e.reason() == proofs::RefusalReason::offset_head);
  }
}

TEST_CASE("the Boolean components compute their truth tables exactly (0 at BOS)",
          "[compiler][passes]") {
  const attention::EvaluationPolicy policy = fp16_policy();
  const numeric::Arithmetic a = numeric::arithmetic(policy);
  const proofs::ResidualSpace space{"top", "x", "y", "out"};
  struct Row {
    ltl::Operator op;
    int table[4];  // (x, y) = (0,0), (0,1), (1,0), (1,1)
  };
  const Row rows[] = {{ltl::Operator::negation, {1, 1, 0, 0}},
                      {ltl::Operator::conjunction, {0, 0, 0, 1}},
                      {ltl::Operator::disjunction, {0, 1, 1, 1}}};
  for (const Row& row : rows) {
    const proofs::Component c = proofs::boolean_component(row.op, "x", "y", "out", "node");
    const attention::FeedForward ffn = proofs::assemble_feed_forward(c.units, space, a);
    for (int xy = 0; xy < 4; ++xy) {
      const std::vector<numeric::Value> in = {a.one(), xy & 2 ? a.one() : a.zero(),
                                              xy & 1 ? a.one() : a.zero(), a.zero()};
      CHECK(q(attention::feed_forward(ffn, in, policy)[3]) == row.table[xy]);
    }
    const std::vector<numeric::Value> bos(4, a.zero());
    CHECK(q(attention::feed_forward(ffn, bos, policy)[3]) == 0);
  }
  CHECK_THROWS_AS(proofs::boolean_component(ltl::Operator::past, "x", "y", "out", "P x"),
                  InvalidArgument);
}

TEST_CASE("report: the certified length is the smallest of the P certificate and every N_max",
          "[compiler][passes]") {
  proofs::Component bounded;
  bounded.sublayer = proofs::Sublayer::attention;
  bounded.bounded_head = proofs::BoundedHead{"Y a", 1, {}, 43, false};
  proofs::Component wider = bounded;
  wider.bounded_head->n_max = 709;
  proofs::CompiledModel c;
  proofs::describe_components(c, {{wider}, {bounded}});
  REQUIRE(c.certified_length);
  CHECK(*c.certified_length == 43);
  CHECK(c.bounded_heads.size() == 2);
  CHECK(c.layers.size() == 2);
  CHECK(c.layers[1].heads.size() == 1);

  proofs::CompiledModel p;
  p.past = proofs::PastCertificate{};
  p.past->certified_count = 10;
  proofs::describe_components(p, {{bounded}});
  REQUIRE(p.certified_length);
  CHECK(*p.certified_length == 10);

  proofs::CompiledModel none;
  none.past = proofs::PastCertificate{};  // certified_count nullopt: every count
  proofs::describe_components(none, {{proofs::Component{}}});
  CHECK(!none.certified_length);
}

TEST_CASE("heads are wired by name: the matrices use the named columns and rows",
          "[compiler][passes]") {
  // MOD head over a space where bos and top are not at 0 and 1.
  proofs::ModAtomSpec spec;
  spec.m = 3;
  spec.r = 1;
  spec.policy = fp16_policy();
  proofs::ModWiring wiring;
  wiring.space = proofs::ResidualSpace{"x", "top", "y", "bos", "out"};
  const proofs::ModAtomHead h = proofs::make_mod_atom_head(spec, wiring);
  CHECK(h.head.value.cols == 5);
  CHECK(q(h.head.value.at(0, 3)) == 1);   // bos is the fourth coordinate
  CHECK(q(h.head.output.at(4, 0)) == 1);  // out the fifth
  CHECK(q(h.head.key.at(0, 3)) == q(h.C));
  wiring.output = "missing";
  CHECK_THROWS_AS(proofs::make_mod_atom_head(spec, wiring), InvalidArgument);

  // Y^k head: value from `a`, output into `z`.
  proofs::FixedOffsetSpec offset;
  offset.policy = fp16_policy();
  offset.C = 8;
  proofs::HeadWiring named;
  named.space = proofs::ResidualSpace{"z", "a", "b"};
  named.value_source = "a";
  named.output_target = "z";
  const proofs::FixedOffsetHead y = proofs::make_fixed_offset_head(offset, named);
  CHECK(y.head.value.cols == 3);
  CHECK(q(y.head.value.at(0, 1)) == 1);
  CHECK(q(y.head.output.at(0, 0)) == 1);
  // The stand-alone default: one coordinate, source and target.
  const proofs::FixedOffsetHead alone = proofs::make_fixed_offset_head(offset);
  CHECK(alone.head.value.cols == 1);
}

TEST_CASE("assemble: the embedding and classifier of a leaf formula", "[compiler][passes]") {
  const attention::EvaluationPolicy policy = fp16_policy();
  const proofs::LayerPlan plan = proofs::plan_layers(ltl::parse("b"), {"a", "b"});
  CHECK(plan.layers() == 0);
  const attention::Model m = proofs::assemble_model(plan, {}, {"a", "b"}, policy, "b");
  REQUIRE(m.d_model == 4);  // bos top sym:a sym:b
  // BOS = e_bos, b = e_top + e_sym:b, EOS = e_top; classifier sym:b − 1/2.
  CHECK(q(m.embedding.bos[0]) == 1);
  CHECK(q(m.embedding.symbols[1][1]) == 1);
  CHECK(q(m.embedding.symbols[1][3]) == 1);
  CHECK(q(m.embedding.symbols[1][2]) == 0);
  CHECK(q(m.embedding.eos[1]) == 1);
  CHECK(q(m.classifier.weights[3]) == 1);
  CHECK(q(m.classifier.bias) == mpq_class(-1, 2));
}
