#define BOOST_TEST_MODULE core_json
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/error.hpp"
#include "core/json.hpp"

using namespace slurmtune::core;

BOOST_AUTO_TEST_CASE(reads_python_style_non_finite_numbers) {
  const auto v = parse_json(R"({"a": NaN, "b": Infinity, "c": -Infinity, "d": -1.5e3})");
  const auto& o = std::get<JsonObject>(v.data);
  BOOST_TEST(std::isnan(std::get<double>(o.at("a").data)));
  BOOST_TEST(std::get<double>(o.at("b").data) == HUGE_VAL);
  BOOST_TEST(std::get<double>(o.at("c").data) == -HUGE_VAL);
  BOOST_TEST(std::get<double>(o.at("d").data) == -1500.0);
}

BOOST_AUTO_TEST_CASE(reads_nested_values_and_escapes) {
  const auto v = parse_json(R"( {"s": "a\"b\\c\u00e9", "l": [1, true, null, {"x": []}]} )");
  const auto& o = std::get<JsonObject>(v.data);
  BOOST_TEST(std::get<std::string>(o.at("s").data) == "a\"b\\c\xc3\xa9");
  const auto& l = std::get<JsonArray>(o.at("l").data);
  BOOST_TEST(l.size() == 4U);
  BOOST_TEST(std::get<bool>(l[1].data));
  BOOST_TEST(l[3].is_object());
}

BOOST_AUTO_TEST_CASE(names_the_column_of_bad_text) {
  for (const char* bad : {"{", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "{\"a\": nope}", "\"open",
                          "{} trailing", "{\"a\": 1e}"}) {
    BOOST_TEST_CONTEXT(bad) {
      try {
        parse_json(bad);
        BOOST_ERROR("accepted bad JSON");
      } catch (const slurmtune::InputError& e) {
        BOOST_TEST(std::string(e.what()).find("invalid JSON at column") == 0U);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(refuses_absurd_nesting) {
  BOOST_CHECK_THROW(parse_json(std::string(100, '[') + std::string(100, ']')),
                    slurmtune::InputError);
}

BOOST_AUTO_TEST_CASE(reads_numbers_beyond_a_double_as_python_does) {
  const auto v = parse_json(R"({"big": 1e400, "small": -1e-400, "neg": -2E+999})");
  const auto& o = std::get<JsonObject>(v.data);
  BOOST_TEST(std::get<double>(o.at("big").data) == HUGE_VAL);
  BOOST_TEST(std::get<double>(o.at("small").data) == 0.0);
  BOOST_TEST(std::signbit(std::get<double>(o.at("small").data)));
  BOOST_TEST(std::get<double>(o.at("neg").data) == -HUGE_VAL);
}
