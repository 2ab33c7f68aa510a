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

// Python's json.dumps writes every character beyond U+FFFF as a surrogate pair (its
// default ensure_ascii): the pair is one character, a lone surrogate is U+FFFD.
BOOST_AUTO_TEST_CASE(joins_surrogate_pairs_and_replaces_lone_surrogates) {
  const auto text = [](const char* json) { return std::get<std::string>(parse_json(json).data); };
  BOOST_TEST(text(R"("\ud83d\ude00")") == "\xF0\x9F\x98\x80");  // 😀
  BOOST_TEST(text(R"("a\uD834\uDD1Eb")") ==
             "a\xF0\x9D\x84\x9E"
             "b");                                      // 𝄞
  BOOST_TEST(text(R"("\ud83d")") == "\xEF\xBF\xBD");    // high alone
  BOOST_TEST(text(R"("\ude00x")") == "\xEF\xBF\xBDx");  // low alone
  BOOST_TEST(text(R"("\ud83d\u0041")") ==
             "\xEF\xBF\xBD"
             "A");  // high, then not low
  BOOST_TEST(text(R"("\ud83d\ud83d\ude00")") == "\xEF\xBF\xBD\xF0\x9F\x98\x80");
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
