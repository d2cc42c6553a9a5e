#pragma once
/// Comparison of engine results with the independent reference, with a tally of the results
/// that depend on conventions format.hpp leaves open (an infinity in a format without
/// infinities, the sign of a fixed-point zero): those are recorded, not asserted.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "tests/numeric/test_support.hpp"

namespace numeric_test {

class Checker {
 public:
  template <class Describe>
  void check(const Format& f, const Value& got, const reference::Number& expected,
             Describe&& describe) {
    ++mismatches_.checked;
    if (reference::is_convention_dependent(f, expected)) {
      ++convention_count_;
      const reference::Number g = to_number(got);
      if (expected.is_zero()) {
        // fixed point: the value must be zero; its sign is the open convention.
        if (!g.is_zero()) {
          mismatches_.add(describe() + ": expected a zero, got " + show(got));
          return;
        }
        ++(g.negative ? zeros_negative_ : zeros_positive_);
        if (expected.negative) ++zeros_ieee_negative_;
        zero_format_ = f.name;
        return;
      }
      // An exact infinity in a format without one: record what the engine does.
      const std::string key =
          f.name + ": exact " + (expected.negative ? "-inf" : "+inf") + " -> " + g.to_string();
      if (infinity_examples_.size() < 8 && !infinity_examples_.count(key)) {
        infinity_examples_.emplace(key, describe());
      }
      return;
    }
    if (!agrees(got, expected)) {
      mismatches_.add(describe() + ": reference " + expected.to_string() + ", engine " + show(got));
    }
  }

  const Mismatches& mismatches() const { return mismatches_; }
  long convention_count() const { return convention_count_; }

  /// Reports (WARN, once per distinct observation in the whole run) what the engine does
  /// where format.hpp leaves the result open; nothing of it is asserted.
  void report_conventions(const std::string& context) const {
    static std::set<std::string> reported;
    std::string text;
    for (const auto& [key, example] : infinity_examples_) {
      if (reported.insert(key).second) text += "\n  " + key + "   (first seen: " + example + ")";
    }
    if (zeros_positive_ + zeros_negative_ > 0) {
      const std::string key = zero_format_ + (zeros_negative_ == 0   ? " zeros: all +0"
                                              : zeros_positive_ == 0 ? " zeros: all -0"
                                                                     : " zeros: mixed signs");
      if (reported.insert(key).second) {
        text += "\n  " + key + " (" + std::to_string(zeros_positive_) + " +0, " +
                std::to_string(zeros_negative_) + " -0; IEEE's sign rules would give " +
                std::to_string(zeros_ieee_negative_) + " -0)";
      }
    }
    if (!text.empty()) {
      WARN(context << ": results that depend on a convention format.hpp leaves open (not "
                      "asserted):"
                   << text);
    }
  }

 private:
  Mismatches mismatches_;
  long convention_count_ = 0;
  long zeros_positive_ = 0, zeros_negative_ = 0, zeros_ieee_negative_ = 0;
  std::string zero_format_;
  std::map<std::string, std::string> infinity_examples_;
};

}  // namespace numeric_test
