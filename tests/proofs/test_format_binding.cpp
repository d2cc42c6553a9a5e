// F's arithmetic held once: a head's realisation is
// parsed from its policy's numeric::FormatBinding, so F, the rounding and the engine are the
// policy's by construction; the engine changes no byte (mpfr and fast are two implementations
// of the same correctly rounded operations, NUMERIC §2); and the scale C is refused by the
// library (proofs::require_finite_scale) when it is not finite in F.
#include <catch2/catch.hpp>
#include <string>

#include "attention/realisations/realisation.hpp"
#include "attention/transformer/model_spec.hpp"
#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/range/fixed_offset_head.hpp"

using namespace ropesim;
using numeric::Format;
using numeric::Rounding;

namespace {

proofs::FixedOffsetSpec offset_spec(const numeric::Engine& engine, const std::string& realisation) {
  proofs::FixedOffsetSpec s;
  s.schedule = attention::single_schedule(mpq_class(1));
  s.C = 8;
  s.k = 2;
  s.realisation = realisation;
  s.policy.format = Format::fp16();
  s.policy.rounding = Rounding::toward_zero;
  s.policy.engine = &engine;
  return s;
}

proofs::ScanOptions up_to(std::uint64_t L) {
  proofs::ScanOptions o;
  o.max_length = L;
  return o;
}

}  // namespace

TEST_CASE("fixed-offset head: the realisation has the policy's F, rounding and engine",
          "[format_binding][fixed_offset]") {
  for (const numeric::Engine* engine : {&numeric::mpfr_engine(), &numeric::fast_engine()}) {
    for (const std::string spec : {"r1", "r2", "hf"}) {
      const proofs::FixedOffsetHead h = proofs::make_fixed_offset_head(offset_spec(*engine, spec));
      INFO(spec);
      CHECK(h.realisation.engine == engine);
      CHECK(&h.realisation.arithmetic_engine() == engine);
      CHECK(h.realisation.format == Format::fp16());
      CHECK(h.realisation.rounding == Rounding::toward_zero);
    }
  }
}

TEST_CASE("fixed-offset head: --engine mpfr and fast give the same bytes (r2 forms φ in F)",
          "[format_binding][fixed_offset]") {
  for (const std::string spec : {"r1", "r2"}) {
    INFO(spec);
    const auto mpfr = offset_spec(numeric::mpfr_engine(), spec);
    const auto fast = offset_spec(numeric::fast_engine(), spec);
    // the model spec (every weight and bias in F) byte for byte
    CHECK(attention::model_to_json(proofs::offset_model(mpfr)).dump() ==
          attention::model_to_json(proofs::offset_model(fast)).dump());
    // the certified range and its witness, realised through each engine (quadratic scan
    // without the binary64 kernel, so every score goes through the policy's engine)
    proofs::ScanOptions options = up_to(300);
    options.use_fast_kernel = false;
    const auto a = proofs::certified_range(proofs::make_fixed_offset_head(mpfr), options);
    const auto b = proofs::certified_range(proofs::make_fixed_offset_head(fast), options);
    CHECK(a.n_max == b.n_max);
    CHECK(a.at_limit == b.at_limit);
    CHECK(a.fail_query == b.fail_query);
    CHECK(a.fail_competitor == b.fail_competitor);
    CHECK(a.gap == b.gap);
  }
}

TEST_CASE("MOD atom: the r3 realisation has the policy's F, rounding and engine",
          "[format_binding][mod_atom]") {
  for (const numeric::Engine* engine : {&numeric::mpfr_engine(), &numeric::fast_engine()}) {
    proofs::ModAtomSpec spec;
    spec.m = 3;
    spec.r = 1;
    spec.policy.format = Format::fp16();
    spec.policy.rounding = Rounding::nearest_away;
    spec.policy.engine = engine;
    const proofs::ModAtomHead h = proofs::make_mod_atom_head(spec);
    REQUIRE(!h.head.rotary.empty());
    REQUIRE(h.head.rotary[0].realisations.size() == 1);
    const auto& r = h.head.rotary[0].realisations[0];
    REQUIRE(r.has_value());
    CHECK(r->kind == attention::Realisation::Kind::r3);
    CHECK(r->engine == engine);
    CHECK(r->format == Format::fp16());
    CHECK(r->rounding == Rounding::nearest_away);
  }
}

TEST_CASE("parse_realisation: the binding travels; the (format, rounding) form has no engine",
          "[format_binding]") {
  const numeric::FormatBinding bf16_down{Format::bf16(), Rounding::downward,
                                         &numeric::mpfr_engine()};
  // a framework preset goes through the recursive parse: the binding must reach it too
  for (const char* spec : {"r2", "hf", "llamacpp-cpu", "vllm", "pipeline:angle=fp64"}) {
    INFO(spec);
    const attention::Realisation r = attention::parse_realisation(spec, bf16_down);
    CHECK(r.engine == &numeric::mpfr_engine());
    CHECK(r.format == Format::bf16());
    CHECK(r.rounding == Rounding::downward);
    const attention::Realisation w =
        attention::parse_realisation(spec, Format::bf16(), Rounding::downward);
    CHECK(w.engine == nullptr);
    CHECK(&w.arithmetic_engine() == &numeric::default_engine());
    CHECK(w.name() == r.name());
  }
}

TEST_CASE("require_finite_scale: C rounded into F, refused when not finite (THEORY §6)",
          "[format_binding][horizon]") {
  // fp16: max finite 65504, ulp 32 there; under nearest-even overflow starts at 65504 + 16
  const numeric::FormatBinding fp16{Format::fp16(), Rounding::nearest_even, nullptr};
  CHECK(proofs::require_finite_scale(mpq_class(65519), fp16, "65519").to_double() == 65504.0);
  CHECK(proofs::require_finite_scale(mpq_class(8), fp16, "8").to_double() == 8.0);
  try {
    proofs::require_finite_scale(mpq_class(65520), fp16, "65520");
    FAIL("65520 rounds to +inf in fp16 under nearest-even");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()) ==
          "C = 65520 is not finite in fp16 (largest finite 65504); accepted: a positive decimal "
          "or 'auto'");
  }
  // toward zero never rounds a finite real to infinity: 70000 becomes max finite
  const numeric::FormatBinding fp16_rz{Format::fp16(), Rounding::toward_zero,
                                       &numeric::mpfr_engine()};
  CHECK(proofs::require_finite_scale(mpq_class(70000), fp16_rz, "70000").to_double() == 65504.0);
  // fp8e4m3 saturates (no infinities): 10^6 becomes its max finite 448
  const numeric::FormatBinding e4m3{Format::fp8e4m3(), Rounding::nearest_even, nullptr};
  CHECK(proofs::require_finite_scale(mpq_class(1000000), e4m3, "1e6").to_double() == 448.0);
}
