#define BOOST_TEST_MODULE core_trial_command
#include <boost/test/unit_test.hpp>

#include "core/error.hpp"
#include "core/study/trial_command.hpp"

using namespace slurmtune;
using namespace slurmtune::core;

namespace {
SearchSpace space() {
  return SearchSpace({Parameter{"lr", Domain{DomainKind::Uniform, 0, 1, 0, {}}},
                      Parameter{"opt", Domain{DomainKind::Choice, 0, 0, 0, {ParamValue{"a"}}}},
                      Parameter{"layers", Domain{DomainKind::RandInt, 1, 9, 0, {}}}});
}
}  // namespace

BOOST_AUTO_TEST_CASE(placeholders_are_substituted_inside_arguments) {
  const Configuration config{
      {ParamValue{0.125}, ParamValue{std::string("adam")}, ParamValue{std::int64_t{4}}}};
  const auto argv = expand_command({"python3", "train.py", "--lr={lr}", "--opt", "{opt}",
                                    "--out={trial_dir}/t{trial_id}", "{layers}x{layers}"},
                                   space(), config, 7, "/runs/trial-7");
  const std::vector<std::string> expected = {
      "python3", "train.py", "--lr=0.125", "--opt", "adam", "--out=/runs/trial-7/t7", "4x4"};
  BOOST_TEST(argv == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(values_stay_one_argument_whatever_they_contain) {
  // No shell: a value with spaces, quotes or ; is one argv entry, never a command.
  const Configuration config{
      {ParamValue{0.5}, ParamValue{std::string("x; rm -rf / #'\"")}, ParamValue{std::int64_t{1}}}};
  const auto argv = expand_command({"prog", "{opt}"}, space(), config, 0, "/d");
  BOOST_TEST(argv.size() == 2u);
  BOOST_TEST(argv[1] == "x; rm -rf / #'\"");
}

BOOST_AUTO_TEST_CASE(doubled_braces_are_literal) {
  const Configuration config{
      {ParamValue{0.5}, ParamValue{std::string("a")}, ParamValue{std::int64_t{1}}}};
  const auto argv = expand_command({"{{\"lr\": {lr}}}"}, space(), config, 0, "/d");
  BOOST_TEST(argv[0] == "{\"lr\": 0.5}");
}

BOOST_AUTO_TEST_CASE(unknown_placeholders_name_the_argument) {
  const Configuration config{
      {ParamValue{0.5}, ParamValue{std::string("a")}, ParamValue{std::int64_t{1}}}};
  try {
    expand_command({"--x={nope}"}, space(), config, 0, "/d");
    BOOST_FAIL("unknown placeholder accepted");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("\"--x={nope}\"") != std::string::npos);
  }
  BOOST_CHECK_THROW(expand_command({"--x={lr"}, space(), config, 0, "/d"), InputError);
}

// A conditional parameter a configuration does not have: every argument naming it is
// left out whole (--momentum={momentum} for adam), the others stay as they are.
BOOST_AUTO_TEST_CASE(arguments_naming_an_absent_parameter_are_left_out) {
  const SearchSpace conditional(
      {Parameter{"opt",
                 Domain{DomainKind::Choice, 0, 0, 0, {ParamValue{"sgd"}, ParamValue{"adam"}}}},
       Parameter{"momentum",
                 Domain{DomainKind::Uniform, 0, 1, 0, {}},
                 {Condition{0, {ParamValue{"sgd"}}}}}});
  for (const char* opt : {"sgd", "adam"}) {
    Configuration config{{ParamValue{std::string(opt)}, ParamValue{0.5}}};
    conditional.resolve_activity(config);
    const auto argv =
        expand_command({"train", "--opt={opt}", "--momentum={momentum}", "{{momentum}}"},
                       conditional, config, 1, "/t");
    const std::vector<std::string> with = {"train", "--opt=sgd", "--momentum=0.5", "{momentum}"};
    const std::vector<std::string> without = {"train", "--opt=adam", "{momentum}"};
    BOOST_TEST(argv == (std::string(opt) == "sgd" ? with : without),
               boost::test_tools::per_element());
  }
}
