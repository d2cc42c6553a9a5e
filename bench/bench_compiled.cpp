// Compiled-transformer throughput: word positions per second of `attention::run` on
// models built by `proofs::compile` from LTL[P,MOD] formulas, at word lengths 10^3 and 10^4,
// next to a native-double forward pass of the same shapes measured in the same run (the ratio
// is what to compare across machines).
//
// The native reference does, in binary64 and without rounding into F: per position the Q, K, V
// projections of every head (d_model × head_dim), per visible (query, key) pair the score
// q·k, the stable softmax (max, exp, sum, division) and the weighted value sum, the output
// projection, and the FFN (W2·ReLU(W1·h + b1) + b2). It skips the RoPE rotation of scores
// (2 products per rotary pair per pair, small next to the dot products). Same asymptotics as
// the exact run: O(N²·head_dim) per head.
//
//   build/bench/bench_compiled [--lengths 1000,10000] [--format fp16]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/stopwatch.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "proofs/compiler/compiler.hpp"

namespace {

using ropesim::Clock;
using ropesim::seconds_since;
using namespace ropesim;

std::vector<double> doubles(const attention::Matrix& m) {
  std::vector<double> out;
  out.reserve(m.entries.size());
  for (const auto& v : m.entries) out.push_back(v.to_double());
  return out;
}

/// y = M·x for a rows × cols row-major matrix.
void matvec(const std::vector<double>& m, std::size_t rows, std::size_t cols, const double* x,
            double* y) {
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (std::size_t c = 0; c < cols; ++c) s += m[r * cols + c] * x[c];
    y[r] = s;
  }
}

/// The native-double forward pass of the model's shapes over n positions (see the file
/// comment); returns a checksum so that the work is not optimised away.
double native_forward(const attention::Model& model, std::size_t n) {
  const std::size_t d = model.d_model;
  std::vector<double> h(n * d, 0.5), next(n * d);
  for (const auto& layer : model.layers) {
    next = h;
    for (const auto& head : layer.heads) {
      const std::size_t hd = head.head_dim, vd = head.value_dim;
      const auto wq = doubles(head.query), wk = doubles(head.key), wv = doubles(head.value),
                 wo = doubles(head.output);
      std::vector<double> q(n * hd), k(n * hd), v(n * vd), w(n), mixed(vd), out(d);
      for (std::size_t i = 0; i < n; ++i) {
        matvec(wq, hd, d, &h[i * d], &q[i * hd]);
        matvec(wk, hd, d, &h[i * d], &k[i * hd]);
        matvec(wv, vd, d, &h[i * d], &v[i * vd]);
      }
      for (std::size_t i = 1; i < n; ++i) {  // strict masking: keys j < i
        double mx = -INFINITY;
        for (std::size_t j = 0; j < i; ++j) {
          double s = 0;
          for (std::size_t c = 0; c < hd; ++c) s += q[i * hd + c] * k[j * hd + c];
          w[j] = s;
          mx = std::max(mx, s);
        }
        double total = 0;
        for (std::size_t j = 0; j < i; ++j) total += (w[j] = std::exp(w[j] - mx));
        std::fill(mixed.begin(), mixed.end(), 0.0);
        for (std::size_t j = 0; j < i; ++j) {
          const double a = w[j] / total;
          for (std::size_t c = 0; c < vd; ++c) mixed[c] += a * v[j * vd + c];
        }
        matvec(wo, d, vd, mixed.data(), out.data());
        for (std::size_t c = 0; c < d; ++c) next[i * d + c] += out[c];
      }
    }
    if (layer.ffn) {
      const auto w1 = doubles(layer.ffn->w1), w2 = doubles(layer.ffn->w2);
      const std::size_t hidden = layer.ffn->w1.rows;
      std::vector<double> b1(hidden, 0.0), b2(d, 0.0);  // empty bias vectors mean 0
      for (std::size_t r = 0; r < layer.ffn->b1.size() && r < hidden; ++r)
        b1[r] = layer.ffn->b1[r].to_double();
      for (std::size_t c = 0; c < layer.ffn->b2.size() && c < d; ++c)
        b2[c] = layer.ffn->b2[c].to_double();
      std::vector<double> a(hidden), out(d);
      for (std::size_t i = 0; i < n; ++i) {
        matvec(w1, hidden, d, &next[i * d], a.data());
        for (std::size_t r = 0; r < hidden; ++r) a[r] = std::max(0.0, a[r] + b1[r]);
        matvec(w2, d, hidden, a.data(), out.data());
        for (std::size_t c = 0; c < d; ++c) next[i * d + c] += out[c] + b2[c];
      }
    }
    h.swap(next);
  }
  double checksum = 0;
  for (double x : h) checksum += x;
  return checksum;
}

std::string random_word(std::size_t length, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string w(length, 'a');
  for (auto& c : w) c = (rng() & 1) ? 'b' : 'a';
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> lengths = {1000, 10000};
  std::string format_name = "fp16";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--lengths") == 0) {
      lengths.clear();
      std::string list = argv[i + 1];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        lengths.push_back(std::stoull(list.substr(at, comma - at)));
        at = comma + 1;
      }
    }
    if (std::strcmp(argv[i], "--format") == 0) format_name = argv[i + 1];
  }
  const std::vector<std::string> formulas = {"P(a & !P b)",
                                             "mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)"};
  proofs::CompileOptions options;
  options.policy.format = numeric::parse_format(format_name);
  fmt::print(
      "compiled-transformer throughput, format {}, one thread; words uniform over {{a, b}} "
      "(mt19937 seed 1)\n",
      format_name);
  fmt::print("{:<48} {:>7} {:>6} {:>10} {:>14} {:>12} {:>14}\n", "formula", "length", "layers",
             "seconds", "positions/s", "native s", "time / native");
  for (const auto& text : formulas) {
    const auto compiled = proofs::compile(ltl::parse(text), {"a", "b"}, options);
    for (const std::size_t n : lengths) {
      const std::string word = random_word(n, 1);
      const auto start = Clock::now();
      const auto result = attention::run(compiled.model, word);
      const double t = seconds_since(start);
      const auto native_start = Clock::now();
      volatile double sink = native_forward(compiled.model, n + 2);
      (void)sink;
      const double native = seconds_since(native_start);
      fmt::print("{:<48} {:>7} {:>6} {:>10.3f} {:>14.4g} {:>12.4f} {:>14.1f}   (output {})\n", text,
                 n, compiled.model.layers.size(), t, static_cast<double>(n + 2) / t, native,
                 t / native, result.output.to_double());
    }
  }
  return 0;
}
