// The flags that name one realised rotation table (see realisation_options.hpp).
#include "cli/realisation_options.hpp"

namespace ropesim::cli {

void add_realisation_options(CLI::App* cmd, RealisationArguments& a) {
  cmd->add_option("--realization,--realisation", a.realisation,
                  "r1 r2 r3 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--format", a.format, "Number format F (r1-r3) or activation format (pipelines)")
      ->capture_default_str();
  cmd->add_option("--rounding", a.rounding, "Rounding of every step")->capture_default_str();
  cmd->add_option("--engine", a.engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
}

}  // namespace ropesim::cli
