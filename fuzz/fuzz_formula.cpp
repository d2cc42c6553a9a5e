// ltl::parse and ltl::to_string (logic/formula.hpp): an accepted formula prints to text that
// parses back to the same DAG (same size, same printed form), and the parser's rejection is a
// ParseError whose column lies within the input (or just past its end).
#include "fuzz/fuzz.hpp"
#include "logic/formula.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    ropesim::ltl::Formula f;
    try {
      f = ropesim::ltl::parse(text);
    } catch (const ropesim::ltl::ParseError& e) {
      ropesim::fuzz::require(e.column() >= 1 && e.column() <= text.size() + 1,
                             "column out of range");
      throw;
    }
    const std::string printed = ropesim::ltl::to_string(f);
    const ropesim::ltl::Formula g = ropesim::ltl::parse(printed);
    ropesim::fuzz::require(ropesim::ltl::to_string(g) == printed,
                           "print/parse round trip: " + printed);
    ropesim::fuzz::require(g.size() == f.size(),
                           "reparsed formula has another node count: " + printed);
  });
}
