#define BOOST_TEST_MODULE config_enqueue_reader
#include <boost/test/unit_test.hpp>

#include "config/study_file.hpp"
#include "unit/config/study_text.hpp"

// [[enqueue]] (src/config/enqueue_reader.cpp).
using namespace slurmtune;
using namespace slurmtune::core;
using namespace slurmtune::testing;

// [[enqueue]]: values in the search space's order, numbers as the domain's type,
// constants filled in; the resolved study writes and reads them back.
BOOST_AUTO_TEST_CASE(enqueued_configurations_read_and_round_trip) {
  const auto s = config::parse_study(
      kHeader +
          "sampler = \"tpe\"\n[search]\nlr = { loguniform = [1e-4, 0.1] }\n"
          "n = { randint = [1, 8] }\ndrop = { uniform = [0, 0.5], step = 0.1 }\n"
          "opt = { choice = [\"a\", 2.5] }\ntag = \"t\"\n"
          "[[enqueue]]\nopt = 2.5\nlr = 1e-3\nn = 3\ndrop = 0.3\n[[enqueue]]\ndrop = 0\n",
      "e.toml");
  BOOST_REQUIRE(s.sampler.enqueued.size() == 2U);
  const auto& first = s.sampler.enqueued[0].values;
  BOOST_TEST((first == std::vector<std::optional<ParamValue>>{
                           ParamValue{1e-3}, ParamValue{std::int64_t{3}}, ParamValue{0.3},
                           ParamValue{2.5}, ParamValue{std::string("t")}}));
  const auto& second = s.sampler.enqueued[1].values;
  BOOST_TEST((second == std::vector<std::optional<ParamValue>>{std::nullopt, std::nullopt,
                                                               ParamValue{0.0}, std::nullopt,
                                                               ParamValue{std::string("t")}}));
  const std::string text = config::to_toml(s);
  BOOST_TEST(contains(text,
                      "\n[[enqueue]]\nlr = 0.001\nn = 3\ndrop = 0.3\nopt = 2.5\ntag = 't'\n\n"
                      "[[enqueue]]\ndrop = 0.0\ntag = 't'\n"));
  const auto again = config::parse_study(text, "resolved.toml");
  BOOST_TEST((again.sampler.enqueued == s.sampler.enqueued));
  BOOST_TEST(config::flatten_study(again).at("enqueue.2") == "{ drop = 0.0, tag = 't' }");
}

BOOST_AUTO_TEST_CASE(enqueued_values_must_be_values_of_their_domains) {
  const std::string head =
      kHeader + "[search]\nn = { randint = [1, 8] }\nopt = { choice = [\"a\"] }\n";
  BOOST_TEST(contains(error_of(head + "[[enqueue]]\nn = 2.5\n"),
                      "[enqueue] n: 2.5 is not a value of randint [1.0, 8.0]"));
  BOOST_TEST(contains(error_of(head + "[[enqueue]]\nn = 8\n"), "[enqueue] n: 8 is not a value"));
  BOOST_TEST(contains(error_of(head + "[[enqueue]]\nopt = \"b\"\n"),
                      "[enqueue] opt: \"b\" is not a value of choice [\"a\"]"));
  BOOST_TEST(contains(error_of(head + "[[enqueue]]\nopt = [1]\n"),
                      "[enqueue] opt: must be a number, string or boolean"));
  BOOST_TEST(contains(error_of(head + "[[enqueue]]\n"), "names no parameter"));
  BOOST_TEST(contains(error_of(kHeader + "sampler = \"grid\"\n[search]\nx = { grid = [1, 2] }\n"
                                         "[[enqueue]]\nx = 1\n"),
                      "sampler \"grid\" tries every configuration in turn"));
}

// Issue #41 (13): an [[enqueue]] value between a quantized domain's steps, or for a
// conditional parameter whose when does not hold (or whose parent the entry leaves to
// the sampler), is refused where it is written; it used to run off the grid or be
// dropped without a word.
BOOST_AUTO_TEST_CASE(enqueued_values_off_the_grid_or_outside_their_condition_are_refused) {
  const std::string search = kHeader +
                             "[search]\n"
                             "q = { quniform = [0, 1, 0.25] }\n"
                             "n = { qrandint = [1, 9, 2] }\n"
                             "opt = { choice = [\"sgd\", \"adam\"] }\n"
                             "momentum = { uniform = [0, 0.9], when = { opt = \"sgd\" } }\n";
  BOOST_TEST(contains(error_of(search + "[[enqueue]]\nq = 0.3\n"),
                      "study.toml:10:5: [enqueue] q: 0.3 is not on the grid of quniform"));
  BOOST_TEST(contains(error_of(search + "[[enqueue]]\nn = 4\n"),
                      "[enqueue] n: 4 is not on the grid of qrandint"));
  BOOST_TEST(contains(error_of(search + "[[enqueue]]\nopt = \"adam\"\nmomentum = 0.5\n"),
                      "study.toml:11:12: [enqueue] momentum: exists only while opt is one of its "
                      "when's values, and this entry sets opt = \"adam\""));
  BOOST_TEST(contains(error_of(search + "[[enqueue]]\nmomentum = 0.5\n"),
                      "[enqueue] momentum: exists only under its when on opt, which this entry "
                      "leaves to the sampler; give opt too"));
  BOOST_TEST(
      error_of(search + "[[enqueue]]\nq = 0.75\nn = 5\nopt = \"sgd\"\nmomentum = 0.5\n").empty());
}
