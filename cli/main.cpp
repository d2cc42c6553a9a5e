// The ropesim command line: argument parsing and output only (STYLE: no science in cli/).
// main() is cli/ropesim_main.cpp (the Python module calls the libraries, not this).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <new>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/hf_config.hpp"
#include "attention/schedules/schedule.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "numeric/format.hpp"
#include "numeric/version.hpp"

namespace ropesim::cli {

CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        try {
          text = std::to_string(
              ropesim::parse_integer(text, "", lo, hi));  // "010" is ten, not octal eight
        } catch (const InvalidArgument& e) {
          return e.what();
        }
        return {};
      },
      "INT in " + range, "integer_in");
}

void add_spellings_to_help(CLI::App& app) {
  const std::string formats =
      "Accepted: " + numeric::format_spellings() + "; lists take ranges such as p=4..53,e=11.";
  const std::string schedules = "Accepted: " + attention::schedule_spellings() + ".";
  const std::string realisations = "Accepted: " + attention::realisation_spellings() + ".";
  const std::string roundings =
      "Accepted: nearest-even nearest-away toward-zero upward downward (rne rna rz ru rd).";
  for (CLI::App* sub : app.get_subcommands({})) {
    for (CLI::Option* option : sub->get_options()) {
      const std::string name = option->get_name();
      const std::string* extra = nullptr;
      if (name == "--format" || name == "--formats" || name == "--accumulator") extra = &formats;
      if (name == "--schedule" || name == "--schedules") extra = &schedules;
      if (name == "--realization" || name == "--realizations") extra = &realisations;
      if (name == "--rounding") extra = &roundings;
      if (extra) option->description(option->get_description() + ". " + *extra);
    }
    add_spellings_to_help(*sub);
  }
}

std::string progress_line(std::size_t done, std::size_t total, const std::string& what,
                          double elapsed) {
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + what + "  " +
                     ropesim::duration_text(elapsed);
  if (done > 0 && elapsed > 0) {
    const double rate = static_cast<double>(done) / elapsed;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, ", %.3g/s", rate);
    line += buffer;
    if (done < total)
      line +=
          ", about " + ropesim::duration_text(static_cast<double>(total - done) / rate) + " left";
  }
  return line;
}

namespace {

/// Records argv as CLI11 parsed it (set_command_words): each word's option and role, so that
/// provenance is structured data (`merge` no longer re-tokenises commands).
void record_command_words(const CLI::App& app, int argc, char** argv) {
  // The parsed sub-command chain, deepest first: an option belongs to the deepest that has it.
  std::vector<const CLI::App*> chain{&app};
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const auto* sub : chain.back()->get_subcommands({})) {
      if (sub->parsed()) {
        chain.push_back(sub);
        deeper = true;
        break;
      }
    }
  }
  std::reverse(chain.begin(), chain.end());
  auto find = [&](const std::string& name) -> const CLI::Option* {
    for (const auto* level : chain)
      if (const auto* opt = level->get_option_no_throw(name)) return opt;
    return nullptr;
  };
  std::vector<CommandWord> words;
  std::string pending;  // an option whose value is the next word
  for (int i = 1; i < argc; ++i) {
    CommandWord w;
    w.text = argv[i];
    if (!pending.empty()) {
      w.option = pending;
      w.role = "value";
      pending.clear();
    } else if (w.text.size() > 1 && w.text[0] == '-') {
      const bool is_long = w.text.rfind("--", 0) == 0;
      const std::size_t eq = is_long ? w.text.find('=') : std::string::npos;
      const std::string name = is_long ? w.text.substr(0, eq) : w.text.substr(0, 2);
      if (const auto* opt = find(name)) {
        w.option = opt->get_name();
        const bool takes_value = opt->get_items_expected_max() > 0;
        if (is_long && eq != std::string::npos) {
          w.role = "name=value";
          w.value_at = eq + 1;
        } else if (!is_long && w.text.size() > 2 && takes_value) {
          w.role = "name=value";
          w.value_at = 2;
        } else {
          w.role = "name";
          if (takes_value) pending = w.option;
        }
      }
    }
    words.push_back(std::move(w));
  }
  set_command_words(std::move(words));
}

}  // namespace

bool stderr_is_tty() { return ::isatty(STDERR_FILENO) != 0; }

void warn_about_schedule(const attention::Schedule& schedule, std::uint64_t last_position) {
  if (const auto warning = attention::longrope_factor_warning(schedule, last_position)) {
    std::cerr << "ropesim: warning: " << one_line(*warning) << "\n";
  }
}

}  // namespace ropesim::cli

int ropesim::cli::run_command_line(int argc, char** argv, Action (*add_check)(CLI::App&)) {
  using namespace ropesim::cli;
  set_command_line(argc, argv);
  CLI::App app{"ropesim: exact finite-precision simulation of RoPE transformers (see README.md)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ropesim " + std::string(ropesim::version()) + " (commit " +
                                        std::string(ropesim::source_commit()) + ")");
  std::vector<Action> actions;
  actions.push_back(add_formats_command(app));
  actions.push_back(add_rotations_command(app));
  actions.push_back(add_compare_command(app));
  actions.push_back(add_diagnose_command(app));
  actions.push_back(add_rotate_command(app));
  actions.push_back(add_sweep_command(app));
  actions.push_back(add_horizon_command(app));
  actions.push_back(add_table_command(app));
  actions.push_back(add_run_command(app));
  actions.push_back(add_construct_command(app));
  actions.push_back(add_compile_command(app));
  actions.push_back(add_plot_command(app));
  actions.push_back(add_merge_command(app));
  if (add_check) actions.push_back(add_check(app));
  actions.push_back(add_classify_command(app));
  actions.push_back(add_accumulate_command(app));
  actions.push_back(add_experiment_command(app));
  actions.push_back(add_analyse_command(app));
  add_spellings_to_help(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (message.find("subcommand is required") != std::string::npos ||
        message.find("were not expected") != std::string::npos) {
      // The deepest command given: its sub-commands are the accepted words.
      const CLI::App* level = &app;
      std::string path = "ropesim";
      for (bool deeper = true; deeper;) {
        deeper = false;
        for (const auto* sub : level->get_subcommands({})) {
          if (sub->parsed()) {
            level = sub;
            path += " " + sub->get_name();
            deeper = true;
            break;
          }
        }
      }
      std::string commands;
      for (const auto* sub : level->get_subcommands({}))
        commands += (commands.empty() ? "" : " ") + sub->get_name();
      if (level != &app && !commands.empty()) {
        message = "'" + path + "' needs a sub-command; accepted: " + commands;
      } else if (level == &app) {
        bool unknown = argc > 1;
        for (const auto* sub : app.get_subcommands({}))
          unknown = unknown && sub->get_name() != argv[1];
        if (unknown && argv[1][0] == '-') {
          message = std::string("unknown option '") + argv[1] + "' before a command";
        } else if (unknown) {
          std::vector<std::string> names;
          for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
          message = std::string("unknown command '") + argv[1] + "'" +
                    ropesim::did_you_mean(argv[1], names);
        } else if (argc <= 1) {
          message = "a command is required";
        }
        message += "; commands: " + commands;
      }
    }
    // CLI11's "At Most 1 required but received N": an option given more than once.
    if (const auto at = message.find(": At Most 1 required but received ");
        at != std::string::npos) {
      message = message.substr(0, at) + ": given " +
                message.substr(at + std::string(": At Most 1 required but received ").size()) +
                " times; accepted: once";
    }
    std::cerr << "ropesim: error: " << one_line(message) << " (see "
              << "ropesim --help)\n";
    return 2;
  }
  record_command_words(app, argc, argv);
  try {
    for (const auto& action : actions) {
      const int code = action();
      if (code >= 0) return code;
    }
  } catch (const ropesim::InvalidArgument& e) {
    std::cerr << "ropesim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "ropesim: error: not enough memory for the requested sizes (positions, model "
                 "dimensions); "
                 "reduce them\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ropesim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
