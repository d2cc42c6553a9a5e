// Test entry point: fixes RapidCheck's seed for CI unless the caller sets RC_PARAMS
// (e.g. RC_PARAMS="seed=7 max_success=20000" build/tests/test_numeric to try harder).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>

int main(int argc, char* argv[]) {
  if (std::getenv("RC_PARAMS") == nullptr) {
    ::setenv("RC_PARAMS", "seed=20261130 max_success=200", 1);
  }
  return Catch::Session().run(argc, argv);
}
