#include "attention/detail/hf_scaling.hpp"

#include <mpfr.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention::detail {

namespace {

using numeric::python_float;

/// A Python float as a tensor operand: converted into the tensor's format `f`.
Value scalar(const FormatOps& f, double x, std::uint8_t& flags) {
  return f.convert(Value::from_double_exact(x), flags);
}

/// Python's math.log of a binary64, correctly rounded (MPFR; the assumption about libm).
double python_log(double x) {
  numeric::Mpfr a(53), r(53);
  mpfr_set_d(a, x, MPFR_RNDN);
  mpfr_log(r, a, MPFR_RNDN);
  return mpfr_get_d(r, MPFR_RNDN);
}

/// transformers find_correction_dim in Python floats:
/// (dim * math.log(L / (n * 2 * math.pi))) / (2 * math.log(base)), each operation binary64.
double correction_dim(double n, std::size_t dim, double base, double L) {
  const double pi = 3.141592653589793;  // math.pi
  const double denominator = (n * 2) * pi;
  return (static_cast<double>(dim) * python_log(L / denominator)) / (2 * python_log(base));
}

/// A Python float `s` (already in `f`) over the tensor element x: one correctly rounded
/// division, or PyTorch's `x.reciprocal() * s` (torch/_tensor.py `__rdiv__`), two roundings.
Value scalar_over(const FormatOps& f, const Value& s, const Value& x, bool reciprocal,
                  std::uint8_t& fl) {
  return reciprocal ? f.mul(f.div(f.one(), x, fl), s, fl) : f.div(s, x, fl);
}

/// Hugging Face _compute_llama3_parameters in `f`, each operation rounded in the order
/// written (NUMERIC §3). Config numbers are Python floats.
Value llama3(const FormatOps& f, const Value& inv, const Llama3Scaling& l, bool reciprocal,
             std::uint8_t& fl) {
  const Value two_pi = scalar(f, 2 * 3.141592653589793, fl);
  const Value wavelen = scalar_over(f, two_pi, inv, reciprocal, fl);
  const Value factor = scalar(f, python_float(l.factor), fl);
  const Value L = scalar(f, python_float(l.original_max_position_embeddings), fl);
  const Value lff = scalar(f, python_float(l.low_freq_factor), fl);
  // low/high wavelengths are Python floats, compared with the fp32 tensor in fp32
  const double low_d =
      python_float(l.original_max_position_embeddings) / python_float(l.low_freq_factor);
  const double high_d =
      python_float(l.original_max_position_embeddings) / python_float(l.high_freq_factor);
  const Value low = scalar(f, low_d, fl);
  const Value high = scalar(f, high_d, fl);
  if (numeric::compare(wavelen, low) == 1) return f.div(inv, factor, fl);
  if (numeric::compare(wavelen, high) == -1) return inv;
  const double span_d = python_float(l.high_freq_factor) - python_float(l.low_freq_factor);
  const Value span = scalar(f, span_d, fl);
  const Value smooth = f.div(f.sub(scalar_over(f, L, wavelen, reciprocal, fl), lff, fl), span, fl);
  const Value scaled = f.div(f.mul(f.sub(f.one(), smooth, fl), inv, fl), factor, fl);
  return f.add(scaled, f.mul(smooth, inv, fl), fl);
}

/// _compute_yarn_parameters: pos_freqs = p, inv_freq_extrapolation = 1/p (= inv),
/// inv_freq_interpolation = 1/(factor·p), low/high from Python floats, the ramp in fp32.
Value yarn(const FormatOps& f, const Value& inv, const Value& p, const Schedule& s,
           const RotaryBlock& b, std::uint8_t& fl) {
  const RopeScaling& r = *s.rope_scaling;
  const double factor = python_float(*r.factor);
  const double L =
      python_float(r.original_max_position_embeddings
                       ? *r.original_max_position_embeddings
                       : mpq_class(mpz_class(std::to_string(*s.max_position_embeddings))));
  const double beta_fast = r.beta_fast && *r.beta_fast != 0 ? python_float(*r.beta_fast) : 32;
  const double beta_slow = r.beta_slow && *r.beta_slow != 0 ? python_float(*r.beta_slow) : 1;
  const std::size_t dim = *s.exponent_dim;
  const double base = python_float(*s.base);
  double low = std::floor(correction_dim(beta_fast, dim, base, L));
  double high = std::ceil(correction_dim(beta_slow, dim, base, L));
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  // linear_ramp_factor(min, max): `if min == max: max += 0.001`; (arange - min) / (max - min)
  if (low == high) high += 0.001;
  const Value k = f.from_uint(b.frequency_index, fl);
  Value ramp = f.div(f.sub(k, scalar(f, low, fl), fl), scalar(f, high - low, fl), fl);
  if (numeric::compare(ramp, f.zero()) == -1) ramp = f.zero();  // torch.clamp(·, 0, 1)
  if (numeric::compare(ramp, f.one()) == 1) ramp = f.one();
  const Value ef = f.sub(f.one(), ramp, fl);  // inv_freq_extrapolation_factor
  const Value interpolation = f.div(f.one(), f.mul(scalar(f, factor, fl), p, fl), fl);
  return f.add(f.mul(interpolation, f.sub(f.one(), ef, fl), fl), f.mul(inv, ef, fl), fl);
}

}  // namespace

Value hf_scaled_inv_freq(const FormatOps& f, const Value& inv_freq, const Value& power,
                         const Schedule& s, const RotaryBlock& b, std::uint8_t& flags,
                         bool reciprocal_division) {
  if (!s.rope_scaling) return inv_freq;
  const RopeScaling& r = *s.rope_scaling;
  const Value p = f.convert(power, flags);
  if (r.type == "mrope") return inv_freq;
  if (r.type == "linear") return f.div(inv_freq, scalar(f, python_float(*r.factor), flags), flags);
  if (r.type == "llama3") return llama3(f, inv_freq, *s.llama3, reciprocal_division, flags);
  if (r.type == "yarn") return yarn(f, inv_freq, p, s, b, flags);
  if (r.type == "longrope") {
    const auto& ext = r.long_factors ? r.long_factor : r.short_factor;
    // torch.tensor(list, dtype=float32): the Python floats rounded to fp32
    const Value e = scalar(f, python_float(ext.at(b.frequency_index)), flags);
    return f.div(f.one(), f.mul(e, p, flags), flags);
  }
  if (r.type == "dynamic") {
    if (s.max_position_embeddings && r.seq_len <= *s.max_position_embeddings) return inv_freq;
    throw InvalidArgument(
        "framework pipelines do not model dynamic rope scaling beyond max_position_embeddings "
        "(seq_len " +
        std::to_string(r.seq_len) +
        "; Hugging Face recomputes the base in Python floats); use r1, r2 or r3, or seq_len ≤ " +
        std::to_string(s.max_position_embeddings.value_or(0)));
  }
  throw InvalidArgument("framework pipelines: unknown rope scaling type '" + r.type +
                        "'; accepted: linear, dynamic, yarn, longrope, llama3, mrope");
}

}  // namespace ropesim::attention::detail
