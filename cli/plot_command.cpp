// `ropesim plot`: figures drawn with gnuplot from numbers the library computes (docs/CLI.md).
//   plot horizon    N_max^(k) of the fixed-offset head against the precision p (THEORY §6), with
//                   the exact-arithmetic bound, the tie distance and the heuristic caps of the same
//                   horizon reports (proofs::horizon);
//   plot rotations  distinct realised rotations per format for each model preset (the census,
//                   attention::sweep; THEORY §3);
//   plot error      the realised-rotation error over positions × blocks (attention::query_position;
//                   NUMERIC §4, GPT-NeoX #1003);
//   plot length     accuracy against word length per schedule × format, certified lengths marked
//                   (proofs::length_experiment; RoPE-X §5-6).
// Output only (STYLE): this file gathers library results into tables and gnuplot scripts.
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "cli/plot_common.hpp"

namespace ropesim::cli {

Action add_plot_command(CLI::App& app) {
  auto* plot =
      app.add_subcommand("plot", "Figures drawn with gnuplot (--out FILE.svg|FILE.png|FILE.pdf)");
  plot->require_subcommand(1);
  auto actions = std::make_shared<std::vector<Action>>(5);
  add_plot_horizon(plot, (*actions)[0]);
  add_plot_rotations(plot, (*actions)[1]);
  add_plot_error(plot, (*actions)[2]);
  add_plot_length(plot, (*actions)[3]);
  add_plot_separation(plot, (*actions)[4]);
  return [actions]() -> int {
    for (const auto& action : *actions) {
      const int code = action();
      if (code >= 0) return code;
    }
    return -1;
  };
}

}  // namespace ropesim::cli
