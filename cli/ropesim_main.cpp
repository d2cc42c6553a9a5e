// The ropesim executable: the command line of cli/main.cpp (run_command_line) with `check`
// (cli/check_command.cpp, RapidCheck's properties).
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  return ropesim::cli::run_command_line(argc, argv, &ropesim::cli::add_check_command);
}
