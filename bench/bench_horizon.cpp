// Cost of the certified range (THEORY §6, RoPE-X eq. 10): the quadratic scan's realised scores
// per second next to a native-double score evaluation measured in the same run and the naive
// count N²/2; then the candidate algorithm (proofs/range/fast_range.hpp) against the scan on the
// same heads (time ratio, identical N_max checked; one frequency, then multi-frequency heads such
// as llama2-7b's 64 blocks), and the fp64 case with N_max in the millions (docs/PERFORMANCE.md).
//
//   build/bench/bench_horizon [--length L] [--skip-scan-rates] [--long-length N]
//                             [--skip-models | --models-only]
//   (default L = 20000: the scan's quick limit; N = 10^6 positions for the long multi-frequency
//   ranges of section 0d on 1 and 2 threads, 0 to skip)
//
// Prints ratios measured in this one run; no absolute target is asserted anywhere.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/stopwatch.hpp"
#include "numeric/binary32_arithmetic.hpp"
#include "numeric/format.hpp"
#include "numeric/summation.hpp"
#include "proofs/range/fast_range.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/horizon.hpp"

namespace {

using ropesim::Clock;
using ropesim::seconds_since;
using ropesim::numeric::Format;

ropesim::proofs::FixedOffsetHead head_for(const Format& f, const mpq_class& C,
                                          const std::string& realisation = "r1") {
  ropesim::proofs::FixedOffsetSpec spec;
  spec.schedule = ropesim::attention::single_schedule(1);
  spec.C = C;
  spec.k = 1;
  spec.realisation = realisation;
  spec.policy.format = f;
  return ropesim::proofs::make_fixed_offset_head(spec);
}

/// Native double: the same triangle of scores q_i·k_j with no rounding into F (two products,
/// one sum, in binary64), over the realised q and k of `s`.
double native_triangle(const ropesim::proofs::RealisedScores& s, std::uint64_t n,
                       double& checksum) {
  std::vector<double> q0, q1, c, sn;
  for (std::uint64_t p = 0; p < n; ++p) {
    q0.push_back(s.query(p)[0].to_double());
    q1.push_back(s.query(p)[1].to_double());
    c.push_back(s.key(p)[0].to_double());
    sn.push_back(s.key(p)[1].to_double());
  }
  const auto start = Clock::now();
  double best = -HUGE_VAL;
  for (std::uint64_t i = 1; i < n; ++i) {
    for (std::uint64_t j = 0; j < i; ++j) {
      const double v = q0[i] * c[j] + q1[i] * sn[j];
      best = v > best ? v : best;
    }
  }
  checksum += best;
  return seconds_since(start);
}

/// The same triangle through RealisedScores::score (binary64 kernel or reference path).
double library_triangle(const ropesim::proofs::RealisedScores& s, std::uint64_t n, bool reference,
                        double& checksum) {
  const auto start = Clock::now();
  double best = -HUGE_VAL;
  for (std::uint64_t i = 1; i < n; ++i) {
    for (std::uint64_t j = 0; j < i; ++j) {
      const double v = (reference ? s.reference_score(i, j) : s.score(i, j)).to_double();
      best = v > best ? v : best;
    }
  }
  checksum += best;
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t length = 20000;
  bool scan_rates = true;
  std::uint64_t long_length = 1'000'000;  // 0: skip section 0d
  bool model_rows = true, models_only = false;
  for (int a = 1; a < argc; ++a) {
    if (a + 1 < argc && std::strcmp(argv[a], "--length") == 0) length = std::stoull(argv[a + 1]);
    if (std::strcmp(argv[a], "--skip-scan-rates") == 0) scan_rates = false;
    if (a + 1 < argc && std::strcmp(argv[a], "--long-length") == 0)
      long_length = std::stoull(argv[a + 1]);
    if (std::strcmp(argv[a], "--skip-models") == 0) model_rows = false;
    if (std::strcmp(argv[a], "--models-only") == 0) models_only = true;
  }
  double checksum = 0;

  // M. Real heads (issue 34): `ropesim horizon --schedule S --k 1 --C auto --format F
  //    --max-length L --jobs 2` through proofs::horizon, with the estimate that decides
  //    --allow-slow (proofs::estimate_horizon) printed beside the measured time; then the bf16
  //    realised-score throughput of the binary32 kernel (Binary32Dot::dot8) against a native
  //    binary32 dot loop over the same vectors, and the binary64 kernel.
  if (model_rows) {
    fmt::print("real heads: horizon --k 1 --C auto --jobs 2, estimate vs measured\n");
    fmt::print("{:<10} {:<5} {:>8} {:>12} {:>10} {:>10} {:>10} {:>9} {:>10}\n", "schedule", "fmt",
               "L", "N_max", "C", "estimate s", "actual s", "act/est", "scored");
    struct ModelRow {
      const char* schedule;
      Format f;
      std::uint64_t L;
    };
    for (const ModelRow& row : {ModelRow{"llama3-8b", Format::bf16(), 100000},
                                ModelRow{"llama3-8b", Format::fp16(), 100000},
                                ModelRow{"llama3-8b", Format::fp32(), 1000000},
                                ModelRow{"llama2-7b", Format::bf16(), 100000},
                                ModelRow{"gemma-7b", Format::bf16(), 100000}}) {
      ropesim::proofs::HorizonSpec spec;
      spec.head.schedule = ropesim::attention::parse_schedule(row.schedule);
      spec.head.policy.format = row.f;
      spec.auto_C = true;
      spec.max_length = row.L;
      spec.threads = 2;
      ropesim::proofs::FixedOffsetSpec probe = spec.head;
      probe.C = 1;
      const auto head = ropesim::proofs::make_fixed_offset_head(probe);
      const auto start = Clock::now();
      const auto est = ropesim::proofs::estimate_horizon(head, row.L, 2, true, spec.slack);
      const double est_seconds = seconds_since(start);
      const auto t0 = Clock::now();
      const auto r = ropesim::proofs::horizon(spec);
      const double actual = seconds_since(t0);
      fmt::print(
          "{:<10} {:<5} {:>8} {:>12} {:>10.6g} {:>10.3g} {:>10.3g} {:>9.2f} {:>10}  "
          "(estimate took {:.2f} s)\n",
          row.schedule, row.f.name, row.L,
          (r.range.at_limit ? ">=" : "") + std::to_string(r.range.n_max), r.C.to_double(),
          est.seconds, actual, actual / est.seconds, r.range.offsets_scored, est_seconds);
    }
    // throughput: 64 queries × 2048 keys of llama3-8b's bf16 head (C = 16384), 128 coordinates
    ropesim::proofs::FixedOffsetSpec spec;
    spec.schedule = ropesim::attention::parse_schedule("llama3-8b");
    spec.C = 16384;
    spec.policy.format = Format::bf16();
    const auto h = ropesim::proofs::make_fixed_offset_head(spec);
    ropesim::proofs::RealisedScores s(h);
    const std::size_t Q = 64, K = 2048, D = h.head.head_dim;
    s.ensure(K);
    std::vector<float> q(Q * D), keys(K * D), kt(K * D);
    std::vector<double> qd(Q * D), kd(K * D);
    for (std::size_t i = 0; i < Q; ++i)
      for (std::size_t c = 0; c < D; ++c)
        qd[i * D + c] = q[i * D + c] = static_cast<float>(s.query(K - 1 - i)[c].to_double());
    for (std::size_t j = 0; j < K; ++j)
      for (std::size_t c = 0; c < D; ++c)
        kd[j * D + c] = keys[j * D + c] = static_cast<float>(s.key(j)[c].to_double());
    for (std::size_t g = 0; g < K / 8; ++g)  // transposed groups of eight keys
      for (std::size_t c = 0; c < D; ++c)
        for (std::size_t l = 0; l < 8; ++l) kt[g * 8 * D + 8 * c + l] = keys[(8 * g + l) * D + c];
    const auto kernel = ropesim::numeric::Binary32Dot::for_policy(h.policy);
    const auto b64 = ropesim::numeric::Binary64Dot::for_policy(h.policy);
    const double pairs = static_cast<double>(Q * K);
    float sink = 0;
    double sink64 = 0;
    // each path timed five times, the fastest kept (the machine is shared)
    auto fastest = [](auto&& body) {
      double best = HUGE_VAL;
      for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = Clock::now();
        body();
        best = std::min(best, seconds_since(t0));
      }
      return best;
    };
    const double native = fastest([&] {
      for (std::size_t i = 0; i < Q; ++i) {
        for (std::size_t j = 0; j < K; ++j) {
          float acc = 0;  // native binary32, sequential, no rounding into F
          for (std::size_t c = 0; c < D; ++c) acc += q[i * D + c] * keys[j * D + c];
          sink += acc;
        }
      }
    });
    float out8[8];
    const double lanes = fastest([&] {
      for (std::size_t i = 0; i < Q; ++i) {
        for (std::size_t g = 0; g < K / 8; ++g) {
          kernel->dot8(&q[i * D], &kt[g * 8 * D], D, out8);
          sink += out8[0] + out8[7];
        }
      }
    });
    const double baseline = fastest([&] {
      for (std::size_t i = 0; i < Q; ++i) {
        for (std::size_t g = 0; g < K / 8; ++g) {
          kernel->dot8(&q[i * D], &kt[g * 8 * D], D, out8, false);
          sink += out8[0] + out8[7];
        }
      }
    });
    const double binary64 = fastest([&] {
      for (std::size_t i = 0; i < Q; ++i)
        for (std::size_t j = 0; j < K; ++j) sink64 += (*b64)(&qd[i * D], &kd[j * D], D);
    });
    fmt::print(
        "\nbf16 realised scores, llama3-8b (C = 16384, 128 coordinates, sequential sums), {} "
        "scores, fastest of 5\n",
        Q * K);
    fmt::print("{:<34} {:>10} {:>12}\n", "path", "ns/score", "x native");
    const double nn = native / pairs * 1e9;
    fmt::print("{:<34} {:>10.2f} {:>12.2f}\n", "native binary32 loop (not bf16)", nn, 1.0);
    fmt::print("{:<34} {:>10.2f} {:>12.2f}\n",
               kernel->vectorised() ? "binary32 kernel, AVX2 dot8" : "binary32 kernel (no AVX2)",
               lanes / pairs * 1e9, lanes / native);
    fmt::print("{:<34} {:>10.2f} {:>12.2f}\n", "binary32 kernel, baseline lanes",
               baseline / pairs * 1e9, baseline / native);
    fmt::print("{:<34} {:>10.2f} {:>12.2f}\n", "binary64 kernel (Binary64Dot)",
               binary64 / pairs * 1e9, binary64 / native);
    checksum += sink + sink64;
    if (models_only) return 0;
    fmt::print("\n");
  }

  // 0. Candidate algorithm vs quadratic scan on the same heads (same N_max required).
  fmt::print("candidate algorithm vs quadratic scan, same head, same L_max (g = 1, r1)\n");
  fmt::print("{:<6} {:>3} {:>22} {:>8} {:>10} {:>12} {:>12} {:>10} {:>10}\n", "format", "k", "C",
             "L_max", "N_max", "scan s", "fast s", "scan/fast", "offsets");
  struct Row {
    Format f;
    std::uint64_t k;
    mpq_class C;
    std::uint64_t L;
  };
  for (const Row& row :
       {Row{Format::fp16(), 1, 2096, 20000}, Row{Format::fp32(), 1, 2839326, 20000},
        Row{Format::fp64(), 1, mpq_class("435633153795365540/1000000"), 5000},
        Row{Format::fp64(), 1, mpq_class("435633153795365540/1000000"), length},
        Row{Format::fp64(), 4, mpq_class("435633153795365540/1000000"), length}}) {
    ropesim::proofs::FixedOffsetSpec spec;
    spec.schedule = ropesim::attention::single_schedule(1);
    spec.C = row.C;
    spec.k = row.k;
    spec.policy.format = row.f;
    const auto h = ropesim::proofs::make_fixed_offset_head(spec);
    ropesim::proofs::ScanOptions o;
    o.max_length = row.L;
    const auto scan = ropesim::proofs::certified_range(h, o);
    const auto fast = ropesim::proofs::certified_range_fast(h, o);
    if (scan.n_max != fast.n_max || scan.fail_competitor != fast.fail_competitor) {
      fmt::print("MISMATCH: scan N_max {} vs candidates {}\n", scan.n_max, fast.n_max);
      return 1;
    }
    fmt::print("{:<6} {:>3} {:>22.12g} {:>8} {:>10} {:>12.4f} {:>12.4f} {:>10.1f} {:>10}\n",
               row.f.name, row.k, h.C.to_double(), row.L,
               (scan.at_limit ? ">=" : "") + std::to_string(scan.n_max), scan.seconds, fast.seconds,
               scan.seconds / fast.seconds, fast.candidate_offsets);
  }

  // 0c. Multi-frequency heads (several rotary blocks, equal weights): the candidate algorithm's
  //     filtered scan of S(n) against the quadratic scan, same head, same L_max.
  fmt::print(
      "\ncandidate algorithm vs quadratic scan, multi-frequency heads (r1, k = 1, equal "
      "weights)\n");
  fmt::print("{:<30} {:<6} {:>10} {:>7} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10}\n", "schedule",
             "format", "C", "L_max", "N_max", "scan s", "fast s", "scan/fast", "offsets", "E");
  struct BlockRow {
    const char* schedule;
    Format f;
    mpq_class C;
    std::uint64_t L;
  };
  for (const BlockRow& row :
       {BlockRow{"llama2-7b", Format::fp32(), 16384, 2500},
        BlockRow{"llama2-7b", Format::fp64(), 1048576, 2500},
        BlockRow{"llama2-7b", Format::fp16(), 2000, 2500},
        BlockRow{"conventional:base=100,dim=8", Format::fp32(), 2000, 5000},
        BlockRow{"conventional:base=100,dim=8", Format::fp32(), 8000, 10000},
        BlockRow{"conventional:base=100,dim=8", Format::fp64(), 8000, 10000}}) {
    ropesim::proofs::FixedOffsetSpec spec;
    spec.schedule = ropesim::attention::parse_schedule(row.schedule);
    spec.C = row.C;
    spec.policy.format = row.f;
    const auto h = ropesim::proofs::make_fixed_offset_head(spec);
    ropesim::proofs::ScanOptions o;
    o.max_length = row.L;
    const auto scan = ropesim::proofs::certified_range(h, o);
    const auto fast = ropesim::proofs::certified_range_fast(h, o);
    if (scan.n_max != fast.n_max || scan.fail_competitor != fast.fail_competitor ||
        scan.gap != fast.gap) {
      fmt::print("MISMATCH: scan N_max {} vs candidates {}\n", scan.n_max, fast.n_max);
      return 1;
    }
    fmt::print(
        "{:<30} {:<6} {:>10.6g} {:>7} {:>10} {:>10.3f} {:>10.4f} {:>10.1f} {:>8} {:>10.3g}\n",
        row.schedule, row.f.name, h.C.to_double(), row.L,
        (scan.at_limit ? ">=" : "") + std::to_string(scan.n_max), scan.seconds, fast.seconds,
        scan.seconds / fast.seconds, fast.candidate_offsets,
        fast.error_bound ? fast.error_bound->get_d() : 0.0);
  }

  // 0b. fp64 with N_max in the millions (C = the C = auto candidate "record n=1980127"),
  //     candidate algorithm only; the scan's N²/2 estimated from its rate above.
  {
    ropesim::proofs::FixedOffsetSpec spec;
    spec.schedule = ropesim::attention::single_schedule(1);
    spec.C = mpq_class("5320402020321196/10");
    spec.policy.format = Format::fp64();
    const auto h = ropesim::proofs::make_fixed_offset_head(spec);
    ropesim::proofs::ScanOptions o;
    o.max_length = 3'000'000;
    const auto fast = ropesim::proofs::certified_range_fast(h, o);
    fmt::print(
        "\nfp64, g = 1, k = 1, C = {:.12g}: N_max = {} (fails at i = {}, offset {}) in {:.2f} s, "
        "{} scores, {} candidate offsets, E = {:.4g}\n",
        h.C.to_double(), fast.n_max, fast.fail_query.value_or(0), fast.fail_offset.value_or(0),
        fast.seconds, fast.scores_evaluated, fast.candidate_offsets,
        fast.error_bound ? fast.error_bound->get_d() : 0.0);
  }
  // 0d. Long certified ranges of multi-frequency heads: the chunked candidate algorithm on 1
  //     and 2 threads to `long_length` positions, the two results required equal (every
  //     field but the time). The bf16 rows make every offset a candidate and fail early: there
  //     the second thread must not cost more than it saves. llama3-8b fp32 takes the C of
  //     `--C auto` (record n = 1: f_large·(1 + 1/16)/δ_1 rounded up; C = 4096 fails at query 2).
  if (long_length > 0) {
    fmt::print(
        "\nlong certified ranges, multi-frequency heads (r1, k = 1, equal weights): chunked "
        "candidate algorithm, 1 and 2 threads\n");
    fmt::print("{:<10} {:<5} {:>8} {:>9} {:>11} {:>10} {:>10} {:>10} {:>9}\n", "schedule", "fmt",
               "C", "L", "N_max", "offsets", "1 thread s", "2 thr. s", "1/2");
    struct LongRow {
      const char* schedule;
      Format f;
      mpq_class C;
    };
    for (const LongRow& row :
         {LongRow{"llama2-7b", Format::fp32(), 4096},
          LongRow{"llama3-8b", Format::fp32(), mpq_class("500074512/100000")},
          LongRow{"llama2-7b", Format::bf16(), 6000}, LongRow{"llama3-8b", Format::bf16(), 6000}}) {
      ropesim::proofs::FixedOffsetSpec spec;
      spec.schedule = ropesim::attention::parse_schedule(row.schedule);
      spec.C = row.C;
      spec.policy.format = row.f;
      const auto h = ropesim::proofs::make_fixed_offset_head(spec);
      ropesim::proofs::ScanOptions o;
      o.max_length = long_length;
      const auto one = ropesim::proofs::certified_range_fast(h, o);
      o.threads = 2;
      const auto two = ropesim::proofs::certified_range_fast(h, o);
      if (one.n_max != two.n_max || one.fail_query != two.fail_query ||
          one.fail_competitor != two.fail_competitor || one.gap != two.gap ||
          one.scores_evaluated != two.scores_evaluated ||
          one.candidate_offsets != two.candidate_offsets) {
        fmt::print("MISMATCH between 1 and 2 threads: N_max {} vs {}\n", one.n_max, two.n_max);
        return 1;
      }
      fmt::print("{:<10} {:<5} {:>8.5g} {:>9} {:>11} {:>10} {:>10.3f} {:>10.3f} {:>9.2f}\n",
                 row.schedule, row.f.name, h.C.to_double(), long_length,
                 (one.at_limit ? ">=" : "") + std::to_string(one.n_max), one.candidate_offsets,
                 one.seconds, two.seconds, one.seconds / two.seconds);
    }
  }
  if (!scan_rates) return 0;
  fmt::print("\n");

  // 1. The whole scan, end to end, on a head that certifies every length up to L (fp64,
  //    C ≈ f_large/δ_710, the C that `--C auto` picks): N²/2 scores.
  fmt::print("certified-range scan, end to end (fp64, g = 1, k = 1, C = 435633153795.36554, r1)\n");
  fmt::print("{:>8} {:>14} {:>14} {:>10} {:>14}\n", "L", "scores", "N^2/2", "seconds", "scores/s");
  const auto fp64_head = head_for(Format::fp64(), mpq_class("435633153795365540/1000000"));
  for (std::uint64_t L : {std::uint64_t{2000}, std::uint64_t{5000}, length}) {
    ropesim::proofs::ScanOptions o;
    o.max_length = L;
    const auto r = ropesim::proofs::certified_range(fp64_head, o);
    const double n = static_cast<double>(L + 2);
    fmt::print("{:>8} {:>14} {:>14.4g} {:>10.3f} {:>14.4g}{}\n", L, r.scores_evaluated, n * n / 2,
               r.seconds, static_cast<double>(r.scores_evaluated) / r.seconds,
               r.at_limit ? "" : "  (stopped early)");
  }

  // 2. Score throughput per format: binary64 kernel and reference path (attention::head_score)
  //    against native double on the same realised q, k (triangle of N(N-1)/2 scores).
  fmt::print(
      "\nscore evaluation, triangle of N(N-1)/2 scores over the realised q_i, k_j (r1, g = 1, k = "
      "1, C = 2^10)\n");
  fmt::print("{:<8} {:<10} {:>6} {:>12} {:>14} {:>12}\n", "format", "path", "N", "ns/score",
             "scores/s", "x native");
  for (const Format& f :
       {Format::fp16(), Format::bf16(), Format::fp32(), Format::fp64(), Format::fp8e4m3()}) {
    const auto h = head_for(f, 1024);
    ropesim::proofs::RealisedScores s(h);
    const std::uint64_t n_fast = s.fast() ? 4000 : 300;
    s.ensure(n_fast);
    const double native = native_triangle(s, n_fast, checksum);
    const double pairs_fast = static_cast<double>(n_fast) * static_cast<double>(n_fast - 1) / 2;
    const double native_ns = native / pairs_fast * 1e9;
    if (s.fast()) {
      const double t = library_triangle(s, n_fast, false, checksum);
      fmt::print("{:<8} {:<10} {:>6} {:>12.2f} {:>14.4g} {:>12.1f}\n", f.name, "kernel", n_fast,
                 t / pairs_fast * 1e9, pairs_fast / t, (t / pairs_fast * 1e9) / native_ns);
    }
    const std::uint64_t n_ref = 300;
    const double pairs_ref = static_cast<double>(n_ref) * static_cast<double>(n_ref - 1) / 2;
    const double t = library_triangle(s, n_ref, true, checksum);
    fmt::print("{:<8} {:<10} {:>6} {:>12.2f} {:>14.4g} {:>12.1f}\n", f.name, "reference", n_ref,
               t / pairs_ref * 1e9, pairs_ref / t, (t / pairs_ref * 1e9) / native_ns);
    fmt::print("{:<8} {:<10} {:>6} {:>12.2f} {:>14.4g} {:>12.1f}\n", f.name, "native", n_fast,
               native_ns, 1e9 / native_ns, 1.0);
  }

  // 3. What the naive scan would cost at the horizons fp64 reaches (N²/2 at the rate above).
  ropesim::proofs::ScanOptions o;
  o.max_length = 5000;
  const auto r = ropesim::proofs::certified_range(fp64_head, o);
  const double rate = static_cast<double>(r.scores_evaluated) / r.seconds;
  fmt::print("\nnaive N^2/2 at the measured fp64 scan rate ({:.3g} scores/s)\n", rate);
  for (double N : {2e4, 1e5, 312689.0, 1e6, 1e7}) {
    fmt::print("  N = {:>10.4g}: N^2/2 = {:.3g} scores, about {:.3g} s\n", N, N * N / 2,
               N * N / 2 / rate);
  }
  if (checksum == 12345.678) fmt::print("");  // keep the work observable
  return 0;
}
