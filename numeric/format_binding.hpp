#pragma once
/// F bound once: the format F, the rounding direction of every operation and the engine that
/// computes them (THEORY §1 for F, §2.1 for "every operation rounded once into F"; NUMERIC §1–2
/// for the engines). numeric::EvaluationPolicy and attention::Realisation both derive from it,
/// so a head that holds a policy and a realisation parsed from it (attention::parse_realisation
/// taking a FormatBinding) cannot hold two different F, two roundings or two engines.
#include "numeric/arithmetic.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

namespace ropesim::numeric {

/// The choice of F's arithmetic that travels with a run: F, the rounding direction and the
/// engine (THEORY §1, §2.1). A value type; the engine is borrowed (it must outlive every copy).
/// The canonical default is fp32 under round-to-nearest-even on default_engine().
struct FormatBinding {
  /// F: the format every stored value lives in (for a pipeline realisation: the activation
  /// format A).
  Format format = Format::fp32();
  /// The rounding direction of every operation (THEORY §2.1 default: nearest-even).
  Rounding rounding = Rounding::nearest_even;
  /// The engine (numeric/fast_engine.hpp engine_by_name: mpfr, fast, auto); nullptr means
  /// default_engine(). Engines give the same bits and differ only in speed (NUMERIC §2), so
  /// the engine never changes a result. Must outlive the binding.
  const Engine* engine = nullptr;

  /// The engine to use (never null): *engine, or default_engine() when unset.
  const Engine& arithmetic_engine() const { return engine ? *engine : default_engine(); }
  /// The correctly rounded operations of F under the rounding, on arithmetic_engine()
  /// (numeric::Arithmetic; THEORY §1). Throws nothing beyond Arithmetic's constructor.
  Arithmetic arithmetic() const { return Arithmetic(format, rounding, arithmetic_engine()); }
};

}  // namespace ropesim::numeric
