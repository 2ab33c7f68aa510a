#define BOOST_TEST_MODULE core_replay
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/replay/replay.hpp"
#include "core/replay/replay_event.hpp"
#include "core/schedulers/scheduler_spec.hpp"
#include "core/study/scheduler_factory.hpp"
#include "unit/core/schedulers/scheduler_fixture.hpp"

using namespace slurmtune::core;

namespace {
std::string replay(const std::string& events, Mode mode = Mode::Min) {
  const auto scheduler = make_scheduler(testing::spec(SchedulerType::Asha, 1, 3, 9), mode, 0, "t");
  std::istringstream in(events);
  std::ostringstream out;
  replay_events(*scheduler, in, out, "events.jsonl");
  return out.str();
}

std::string error_of(const std::string& events) {
  try {
    replay(events);
  } catch (const slurmtune::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

BOOST_AUTO_TEST_CASE(prints_one_decision_line_per_report) {
  const std::string out = replay(
      "{\"type\":\"start\",\"trial\":0}\n"
      "# comments and blank lines are skipped\n"
      "\n"
      "{\"type\":\"report\",\"trial\":0,\"step\":1,\"value\":0.5}\n"
      "{\"type\":\"start\",\"trial\":1}\n"
      "{\"type\":\"report\",\"trial\":1,\"step\":1,\"value\":0.9}\n"
      "{\"type\":\"report\",\"trial\":1,\"step\":2,\"value\":NaN}\n"
      "{\"type\":\"end\",\"trial\":1,\"state\":\"stopped\"}\n");
  BOOST_TEST(
      out ==
      "{\"trial\":0,\"step\":1,\"decision\":\"continue\",\"rung\":0,\"milestone\":1}\n"
      "{\"trial\":1,\"step\":1,\"decision\":\"stop\",\"rung\":0,\"milestone\":1,\"cutoff\":0.5}\n"
      "{\"trial\":1,\"step\":2,\"decision\":\"continue\"}\n");
}

BOOST_AUTO_TEST_CASE(writes_non_finite_cutoffs_as_python_does) {
  const std::string out = replay(
      "{\"type\":\"start\",\"trial\":0}\n"
      "{\"type\":\"report\",\"trial\":0,\"step\":1,\"value\":-Infinity}\n"
      "{\"type\":\"start\",\"trial\":1}\n"
      "{\"type\":\"report\",\"trial\":1,\"step\":1,\"value\":1.5}\n");
  BOOST_TEST(out.find("\"cutoff\":NaN") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_malformed_line_names_its_line_number) {
  BOOST_TEST(
      error_of("{\"type\":\"start\",\"trial\":0}\n{oops}\n").find("events.jsonl:2: invalid JSON") ==
      0U);
  BOOST_TEST(error_of("[1]\n").find("events.jsonl:1: expected a JSON object") == 0U);
  BOOST_TEST(error_of("{\"type\":\"jump\",\"trial\":0}\n").find("unknown event type \"jump\"") !=
             std::string::npos);
  BOOST_TEST(error_of("{\"type\":\"start\"}\n").find("missing field \"trial\"") !=
             std::string::npos);
  BOOST_TEST(error_of("{\"type\":\"start\",\"trial\":-1}\n").find("non-negative integer") !=
             std::string::npos);
  BOOST_TEST(error_of("{\"type\":\"start\",\"trial\":0}\n{\"type\":\"report\",\"trial\":0,\"step\":"
                      "\"a\",\"value\":1}\n")
                 .find("events.jsonl:2: field \"step\" must be a number, not string") == 0U);
  BOOST_TEST(error_of("{\"type\":\"report\",\"trial\":4,\"step\":1,\"value\":1}\n")
                 .find("events.jsonl:1: trial 4 reported before it was started") == 0U);
  BOOST_TEST(
      error_of(
          "{\"type\":\"start\",\"trial\":0}\n{\"type\":\"end\",\"trial\":0,\"state\":\"gone\"}\n")
          .find("events.jsonl:2: field \"state\"") == 0U);
}

// Issue #41 (16): steps outside 0..2^53 (NaN and infinities among them), events of trials
// never started or already ended, a second start and brackets an int cannot hold are
// refused with the line and the trial.
BOOST_AUTO_TEST_CASE(refuses_impossible_steps_trials_and_brackets) {
  const std::string start = "{\"type\":\"start\",\"trial\":0}\n";
  const auto report = [](const std::string& step) {
    return "{\"type\":\"report\",\"trial\":0,\"step\":" + step + ",\"value\":1}\n";
  };
  for (const std::string step : {"NaN", "Infinity", "-Infinity", "-5", "1e300", "9007199254740994"})
    BOOST_TEST(
        error_of(start + report(step))
                .find("events.jsonl:2: field \"step\" must be from 0 to 2^53 (9007199254740992)") ==
            0U,
        step);
  BOOST_TEST(error_of(start + report("9007199254740992")).empty());
  BOOST_TEST(error_of(start + "{\"type\":\"end\",\"trial\":0,\"state\":\"completed\",\"step\":NaN,"
                              "\"value\":1}\n")
                 .find("events.jsonl:2: field \"step\" must be from 0") == 0U);
  BOOST_TEST(error_of(start + "{\"type\":\"checkpoint\",\"trial\":0,\"step\":-1}\n")
                 .find("events.jsonl:2: field \"step\" must be from 0") == 0U);
  // A checkpoint without a step (older logs: NaN) is one a resumed study awaited from a
  // trial that ended without it: it will never come (export writes it so).
  BOOST_TEST(error_of(start + "{\"type\":\"checkpoint\",\"trial\":0}\n").empty());
  BOOST_TEST(error_of(start + "{\"type\":\"checkpoint\",\"trial\":0,\"step\":NaN}\n").empty());
  BOOST_TEST(error_of("{\"type\":\"end\",\"trial\":3,\"state\":\"completed\"}\n")
                 .find("events.jsonl:1: trial 3 ended before it was started") == 0U);
  BOOST_TEST(error_of("{\"type\":\"checkpoint\",\"trial\":3,\"step\":1}\n")
                 .find("events.jsonl:1: trial 3 saved a checkpoint before it was started") == 0U);
  BOOST_TEST(error_of(start + start).find("events.jsonl:2: trial 0 starts a second time") == 0U);
  BOOST_TEST(error_of(start + "{\"type\":\"end\",\"trial\":0,\"state\":\"failed\"}\n" + report("1"))
                 .find("events.jsonl:3: trial 0 reported after it ended") == 0U);
  for (const std::string bracket : {"-1", "2147483648", "1e300", "0.5", "NaN"})
    BOOST_TEST(error_of("{\"type\":\"start\",\"trial\":0,\"bracket\":" + bracket + "}\n")
                       .find("events.jsonl:1: field \"bracket\" must be a whole number from 0 to "
                             "1000000") == 0U,
               bracket);
}

// Recorded times (what a sampler learns step costs from) and session starts are read;
// a time must be a finite number.
BOOST_AUTO_TEST_CASE(reads_times_and_sessions) {
  const std::string log =
      "{\"type\":\"start\",\"trial\":0,\"time\":1.5}\n"
      "{\"type\":\"report\",\"trial\":0,\"step\":1,\"value\":0.5,\"time\":2.25}\n"
      "{\"type\":\"session\"}\n"
      "{\"type\":\"report\",\"trial\":0,\"step\":2,\"value\":0.4,\"time\":9000}\n";
  BOOST_TEST(error_of(log).empty());
  for (const std::string time : {"NaN", "Infinity", "\"soon\""})
    BOOST_TEST(error_of("{\"type\":\"start\",\"trial\":0,\"time\":" + time + "}\n")
                       .find("events.jsonl:1: field \"time\"") == 0U,
               time);
}

BOOST_AUTO_TEST_CASE(json_numbers_drop_the_fraction_of_integral_values) {
  BOOST_TEST(json_number(3.0) == "3");
  BOOST_TEST(json_number(0.25) == "0.25");
  BOOST_TEST(json_number(-HUGE_VAL) == "-Infinity");
}

// The event reader (simdjson's on-demand API, replay_event.hpp): Python's NaN and
// infinities are numbers, fields it does not use are skipped, and whatever breaks the
// line is refused with the column where it breaks.
BOOST_AUTO_TEST_CASE(the_event_reader_reads_what_python_writes_and_refuses_the_rest) {
  const std::string start = "{\"type\": \"start\", \"trial\": 0, \"note\": [1, {\"x\": null}]}\n";
  // Python's spelling of the non-finite values, with its ", " and ": " separators.
  BOOST_TEST(replay(start + "{\"type\": \"report\", \"trial\": 0, \"step\": 1, \"value\": "
                            "Infinity}\n{\"type\": \"report\", \"trial\": 0, \"step\": 2, "
                            "\"value\": -Infinity}\n")
                 .find("\"step\":2,") != std::string::npos);
  BOOST_TEST(error_of(start + "{\"type\": \"report\", \"trial\": 0, \"step\": Inf, \"value\": 1}\n")
                 .find("events.jsonl:2: invalid JSON at column") == 0U);
  // Something after the object breaks the line; so does a cut one.
  BOOST_TEST(error_of(start + "{\"type\": \"close\"} {\"type\": \"close\"}\n")
                 .find("events.jsonl:2: invalid JSON at column") == 0U);
  BOOST_TEST(
      error_of("{\"type\": \"start\", \"trial\": 0\n").find("events.jsonl:1: invalid JSON") == 0U);
  BOOST_TEST(error_of("\"start\"\n").find("events.jsonl:1: expected a JSON object, not string") ==
             0U);
  // Blank lines and comments are no events.
  BOOST_TEST(replay("\n# a comment\n" + start + "   \n").empty());
}

// A string with a lone surrogate escape (Python writes one for a byte of a file name that
// is not UTF-8): simdjson refuses it, the reader unescapes it (U+FFFD), and its view lives
// as long as the line's other strings.
BOOST_AUTO_TEST_CASE(the_event_reader_keeps_strings_it_unescapes_itself) {
  ReplayEventReader reader;
  std::string line =
      R"({"type": "x\udcffy", "state": "s\ud83d", "config": {"k\udcff": "v\ude00w"}})";
  const ReplayEvent event = reader.read(line);
  BOOST_TEST(event.type->text == "x\xEF\xBF\xBDy");
  BOOST_TEST(event.state->text == "s\xEF\xBF\xBD");
  BOOST_REQUIRE(event.config->members.size() == 1U);
  BOOST_TEST(event.config->members[0].name == "k\xEF\xBF\xBD");
  BOOST_TEST(event.config->members[0].text == "v\xEF\xBF\xBDw");
}
