// The ropesim executable: argument parsing and output only (STYLE: no science in cli/).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <new>

#include "cli/commands.hpp"
#include "numeric/error.hpp"

namespace ropesim::cli {

std::vector<std::string> split_list(const std::string& text, ListKind kind) {
  std::vector<std::string> items;
  auto starts_new = [kind](const std::string& piece) {
    switch (kind) {
      case ListKind::plain: return true;
      case ListKind::formats: return piece.rfind("p=", 0) == 0 || piece.find('=') == std::string::npos;
      case ListKind::schedules:
        // A new spec has a kind (`single:`) or is a preset name; bare numbers such as the
        // `3` of `periodic:m=2,3,12` or the `1/3` of `periodic:1/2,1/3` continue the last one.
        return piece.find(':') != std::string::npos ||
               (piece.find('=') == std::string::npos &&
                std::any_of(piece.begin(), piece.end(), [](unsigned char c) { return std::isalpha(c) != 0; }));
    }
    return true;
  };
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(';', start);
    const std::string group = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    bool first_in_group = true;
    std::size_t from = 0;
    for (;;) {
      const std::size_t comma = group.find(',', from);
      const std::string piece = group.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      if (!piece.empty()) {
        if (first_in_group || starts_new(piece) || items.empty()) {
          items.push_back(piece);
        } else {
          items.back() += "," + piece;
        }
        first_in_group = false;
      }
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return items;
}

bool stderr_is_tty() { return ::isatty(STDERR_FILENO) != 0; }

}  // namespace ropesim::cli

int main(int argc, char** argv) {
  using namespace ropesim::cli;
  CLI::App app{"ropesim: exact finite-precision simulation of RoPE transformers (see README.md)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ropesim 0.1.0");
  std::vector<Action> actions;
  actions.push_back(add_formats_command(app));
  actions.push_back(add_rotations_command(app));
  actions.push_back(add_sweep_command(app));
  actions.push_back(add_horizon_command(app));
  actions.push_back(add_table_command(app));
  actions.push_back(add_run_command(app));
  actions.push_back(add_construct_command(app));
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
    if (message.find("subcommand is required") != std::string::npos || message.find("were not expected") != std::string::npos) {
      std::string commands;
      for (const auto* sub : app.get_subcommands({})) commands += (commands.empty() ? "" : " ") + sub->get_name();
      bool unknown = argc > 1 && argv[1][0] != '-';
      for (const auto* sub : app.get_subcommands({})) unknown = unknown && sub->get_name() != argv[1];
      if (unknown) message = std::string("unknown command '") + argv[1] + "'";
      message += "; commands: " + commands;
    }
    std::cerr << "ropesim: error: " << message << " (see ropesim --help)\n";
    return 2;
  }
  try {
    for (const auto& action : actions) {
      const int code = action();
      if (code >= 0) return code;
    }
  } catch (const ropesim::InvalidArgument& e) {
    std::cerr << "ropesim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "ropesim: error: not enough memory for the requested sizes (positions, model dimensions); "
                 "reduce them\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ropesim: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
