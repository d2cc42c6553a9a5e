#include "cli/jobs.hpp"

#include <algorithm>
#include <cctype>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "numeric/parallel.hpp"

namespace ropesim::cli {

CLI::Option* add_jobs_option(CLI::App* cmd, unsigned& jobs) {
  return add_integer_option(
      cmd, "--jobs,--threads", jobs,
      "Worker threads (0 = all cores); the output is the same for every count", 0, 256);
}

unsigned jobs_threads(unsigned jobs) { return numeric::resolve_threads(jobs); }

CLI::Option* add_shard_option(CLI::App* cmd, std::string& text) {
  return cmd->add_option(
      "--shard", text,
      "Compute only shard I of N (I/N, 1 <= I <= N): rows [floor((I-1)T/N), floor(IT/N)) of the T "
      "rows; join the files with ropesim merge");
}

}  // namespace ropesim::cli
