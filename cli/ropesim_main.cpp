// The ropesim executable: the command line of cli/main.cpp (run_command_line).
#include "cli/commands.hpp"

int main(int argc, char** argv) { return ropesim::cli::run_command_line(argc, argv); }
