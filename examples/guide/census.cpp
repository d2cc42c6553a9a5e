// Rotation census (attention/): do the realised rotations R̂_0, R̂_1, ... ever repeat?
//   periodic:m=2,3,12 realised by the r3 table in fp16: periodic, period lcm(2, 3, 12) = 12;
//   single:g=1 realised by r1 in fp16: not periodic, but rotations repeat once positions 710
//   apart come within an fp16 rounding of each other (710 = 113·2π + 0.00006; 355/113 ≈ π).
#include "attention/census/census.hpp"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "numeric/format.hpp"

namespace {

void report(const std::string& schedule_spec, const std::string& realisation_spec) {
  using namespace ropesim;
  const attention::Schedule schedule = attention::parse_schedule(schedule_spec);
  const attention::Realisation realisation =
      attention::parse_realisation(realisation_spec, numeric::Format::fp16());
  attention::CensusOptions options;
  options.positions = 1024;  // positions 0..1023; candidate periods 1..512
  const attention::CensusResult c = attention::census(schedule, realisation, options);

  std::cout << c.schedule << " " << c.realisation << " " << c.format.name << ": "
            << c.distinct_rotations << " distinct rotations in " << c.positions << " positions";
  if (c.first_repeat) {
    std::cout << ", first repeat R(" << c.first_repeat->later << ") = R(" << c.first_repeat->earlier
              << ")";
  }
  if (c.period) {
    std::cout << ", period " << *c.period << "\n";
  } else {
    // The non-periodicity certificate: for each P, a position i with R(i + P) != R(i).
    const auto witnessed = std::count_if(c.witnesses.begin(), c.witnesses.end(),
                                         [](std::int64_t i) { return i >= 0; });
    std::cout << ", no period: a witness for " << witnessed << " of the periods 1.." << c.max_period
              << "\n";
  }
}

}  // namespace

int main() {
  try {
    report("periodic:m=2,3,12", "r3");
    report("single:g=1", "r1");
  } catch (const ropesim::InvalidArgument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
