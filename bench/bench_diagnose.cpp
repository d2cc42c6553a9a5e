// `ropesim diagnose`: the whole report for a model preset in one dtype and several frameworks
// over a context of N tokens, against one `compare` of the first framework's correct path
// against the exact rotation over the same N positions (every block), measured in the same run.
// The ratio printed is diagnose seconds / that compare's seconds. Issue 35 asks for the
// 128k-context report of one config × dtype × 3 frameworks within 60 s on 2 cores.
// With --separate 1 it also runs the report with every section realising its own paths
// (DiagnoseOptions::share_values = false, the code before each path was realised once) and
// prints shared / separate, both measured in this run (and checks that the reports agree).
// With --stages 1 it prints the report's wall seconds and the process's CPU seconds per stage
// (compare, rotations, scores, horizon, base-context, semantic-drift; from the progress
// callback, each stage running until the next one is announced), to show where the time goes
// and which stages leave a core idle.
//
//   build/bench/bench_diagnose [--schedule llama3.1-8b] [--context 131072] [--format bf16]
//                              [--frameworks hf,vllm,flash-attn] [--threads 2] [--separate 0|1]
//                              [--stages 0|1]
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "attention/fidelity/compare.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/stopwatch.hpp"
#include "numeric/format.hpp"
#include "proofs/reports/diagnose.hpp"

namespace {

using ropesim::Clock;
using ropesim::seconds_since;
using namespace ropesim;

/// User + system CPU seconds of the whole process so far (every thread).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// Wall and CPU seconds per stage kind (the first word of the progress callback's stage).
struct StageTimes {
  std::map<std::string, std::pair<double, double>> seconds;  // kind -> (wall, CPU)
  std::vector<std::string> order;
  std::string current;
  Clock::time_point since = Clock::now();
  double cpu_since = cpu_seconds();
  void enter(const std::string& stage) {
    const std::string kind = stage.substr(0, stage.find(' '));
    if (kind == current) return;
    close();
    current = kind;
    if (!seconds.count(kind)) order.push_back(kind);
  }
  void close() {
    if (!current.empty()) {
      auto& [wall, cpu] = seconds[current];
      wall += seconds_since(since);
      cpu += cpu_seconds() - cpu_since;
    }
    since = Clock::now();
    cpu_since = cpu_seconds();
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string schedule_spec = "llama3.1-8b", format_name = "bf16",
              framework_list = "hf,vllm,flash-attn";
  std::uint64_t context = 131072;
  unsigned threads = 2;
  bool separate = false, stages = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--schedule") == 0) schedule_spec = argv[i + 1];
    if (std::strcmp(argv[i], "--context") == 0) context = std::stoull(argv[i + 1]);
    if (std::strcmp(argv[i], "--format") == 0) format_name = argv[i + 1];
    if (std::strcmp(argv[i], "--frameworks") == 0) framework_list = argv[i + 1];
    if (std::strcmp(argv[i], "--separate") == 0) separate = std::strcmp(argv[i + 1], "0") != 0;
    if (std::strcmp(argv[i], "--stages") == 0) stages = std::strcmp(argv[i + 1], "0") != 0;
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = static_cast<unsigned>(std::stoul(argv[i + 1]));
  }
  std::vector<std::string> frameworks;
  for (std::size_t at = 0; at <= framework_list.size();) {
    const auto comma = std::min(framework_list.find(',', at), framework_list.size());
    frameworks.push_back(framework_list.substr(at, comma - at));
    at = comma + 1;
  }
  const std::string& framework = frameworks.front();
  const auto s = attention::parse_schedule(schedule_spec);
  const auto format = numeric::parse_format(format_name);

  // The reference: the correct path against exact over all N positions, one call.
  const auto correct = attention::parse_realisation(framework, format);
  attention::CompareOptions co;
  co.positions = context;
  auto start = Clock::now();
  const auto reference = attention::compare(s, correct, std::nullopt, co);
  const double compare_seconds = seconds_since(start);

  proofs::DiagnoseOptions options;
  options.context = context;
  options.threads = threads;
  StageTimes times;
  if (stages)
    options.progress = [&](const std::string& stage, std::uint64_t, std::uint64_t) {
      times.enter(stage);
    };
  start = Clock::now();
  times.close();
  const double cpu_start = cpu_seconds();
  const auto reports = proofs::diagnose_frameworks(s, format, frameworks, options);
  const double diagnose_seconds = seconds_since(start);
  const double diagnose_cpu = cpu_seconds() - cpu_start;
  times.close();
  options.progress = nullptr;

  fmt::print("diagnose {} in {} with {}, context {} ({} threads)\n", schedule_spec, format_name,
             framework_list, context, threads);
  fmt::print("  reference compare ({} correct path vs exact, {} entries, 1 thread): {:.1f} s\n",
             framework, reference.overall.entries, compare_seconds);
  fmt::print(
      "  diagnose ({} frameworks x {} candidates, scores, censuses, head, bounds): {:.1f} s\n",
      frameworks.size(), proofs::diagnose_candidates().size(), diagnose_seconds);
  fmt::print("  ratio diagnose / compare: {:.2f}\n", diagnose_seconds / compare_seconds);
  fmt::print("  diagnose CPU (user + system, every thread): {:.1f} s\n", diagnose_cpu);
  for (const auto& kind : times.order)
    fmt::print("    stage {:<15} {:7.1f} s wall {:7.1f} s CPU\n", kind, times.seconds[kind].first,
               times.seconds[kind].second);
  if (separate) {
    options.share_values = false;
    start = Clock::now();
    const auto apart = proofs::diagnose_frameworks(s, format, frameworks, options);
    const double apart_seconds = seconds_since(start);
    bool same = apart.size() == reports.size();
    for (std::size_t k = 0; same && k < apart.size(); ++k)
      same = proofs::to_json(apart[k]) == proofs::to_json(reports[k]);
    fmt::print("  diagnose, every section realising its own paths: {:.1f} s\n", apart_seconds);
    fmt::print("  ratio shared / separate: {:.2f} (reports {})\n", diagnose_seconds / apart_seconds,
               same ? "equal" : "DIFFER");
    if (!same) return 1;
  }
  for (const auto& report : reports) {
    fmt::print("  ranking {}:", report.framework);
    for (const auto i : report.ranking) fmt::print(" {}", report.candidates[i].name);
    fmt::print("\n");
  }
  return 0;
}
