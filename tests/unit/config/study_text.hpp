#pragma once
// Shared by the study-file reader's unit tests: a minimal [study] header, the refusal a
// text gets, and a substring check that shows the whole message when it fails.
#include <boost/test/unit_test.hpp>
#include <string>

#include "config/study_file.hpp"

namespace slurmtune::testing {

inline const std::string kHeader = "[study]\nname = \"s\"\nmetric = \"loss\"\n";

// The error message for `text`, or "" when it parses.
inline std::string error_of(const std::string& text) {
  try {
    config::parse_study(text, "study.toml");
  } catch (const config::StudyFileError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  const bool found = haystack.find(needle) != std::string::npos;
  if (!found) BOOST_TEST_MESSAGE("message was: " << haystack);
  return found;
}

}  // namespace slurmtune::testing
