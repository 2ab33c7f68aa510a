#define BOOST_TEST_MODULE protocol_json_value
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "core/error.hpp"
#include "protocol/wire/json_value.hpp"

using namespace slurmtune::protocol;

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
  const auto text = [](const std::string& json) {
    const auto array = std::get<JsonArray>(parse_json("[" + json + "]").data);
    return std::get<std::string>(array.at(0).data);
  };
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

// Issue #41 (7): the lenient path that keeps lone surrogates took any escape (`"lo\ss"`
// was recorded as metric "loss"); JSON's escapes are the only ones, in values and keys,
// also where a lone surrogate sends the string down that path.
BOOST_AUTO_TEST_CASE(refuses_escapes_json_does_not_have) {
  for (const char* bad : {R"({"lo\ss": 1})", R"({"a": "lo\ss"})", R"({"\ud83d\q": 1})",
                          R"({"a": "\ud83d\x41"})", R"({"a": "\uZZZZ\ud83d"})"}) {
    BOOST_TEST_CONTEXT(bad) {
      try {
        parse_json(bad);
        BOOST_ERROR("accepted an invalid escape");
      } catch (const slurmtune::InputError& e) {
        const std::string what = e.what();
        BOOST_TEST(what.find("invalid JSON at column") == 0U);
        BOOST_TEST((what.find("escape") != std::string::npos), what);
      }
    }
  }
  const auto object = std::get<JsonObject>(parse_json(R"({"\ud83d\"\\\/\b\f\n\r\t": 1})").data);
  BOOST_TEST(object.size() == 1U);
  BOOST_TEST(object.begin()->key == "\xEF\xBF\xBD\"\\/\b\f\n\r\t");
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

BOOST_AUTO_TEST_CASE(keeps_the_last_of_duplicate_keys_and_sorts_members) {
  const auto v = parse_json(R"({"b": 1, "a": 2, "b": 3, "c": {"z": 1, "y": 2}})");
  const auto& o = std::get<JsonObject>(v.data);
  BOOST_TEST(o.size() == 3U);
  BOOST_TEST(std::get<double>(o.at("b").data) == 3.0);
  std::string keys;
  for (const auto& [key, value] : o)
    keys += key;
  BOOST_TEST(keys == "abc");
  BOOST_TEST(to_json_text(v) == R"({"a": 2.0, "b": 3.0, "c": {"y": 2.0, "z": 1.0}})");
  BOOST_TEST((o.find("d") == o.end()));
  BOOST_CHECK_THROW(o.at("d"), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(reads_a_key_with_a_lone_surrogate) {
  const auto v = parse_json(R"({"x\udcff": "p\udcffq", "n": 1})");
  const auto& o = std::get<JsonObject>(v.data);
  BOOST_TEST(std::get<std::string>(o.at("x\xEF\xBF\xBD").data) ==
             "p\xEF\xBF\xBD"
             "q");
  BOOST_TEST(std::get<double>(o.at("n").data) == 1.0);
}

BOOST_AUTO_TEST_CASE(names_where_and_why_text_is_refused) {
  const auto why = [](const std::string& text) {
    try {
      parse_json(text);
    } catch (const slurmtune::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  BOOST_TEST(why(R"({"a": nope})") == "invalid JSON at column 7: expected a value, not 'nope'");
  BOOST_TEST(why("3") == "invalid JSON at column 1: expected a JSON object or array");
  BOOST_TEST(why("\"text\"").find("expected a JSON object or array") != std::string::npos);
  BOOST_TEST(why("{\"a\": \"\xff\"}").find("invalid JSON at column 1") == 0U);  // not UTF-8
  BOOST_TEST(why(R"({"a": 1} {"b": 2})").find("invalid JSON at column 10") == 0U);
}

// A trial's stderr may hold any bytes; what slurmtune writes as JSON is UTF-8, so that
// simdjson (which refuses text that is not) reads it back.
BOOST_AUTO_TEST_CASE(writes_text_that_is_not_utf8_repaired) {
  const JsonValue bad{JsonArray{JsonValue{std::string("ok \xff\xfe end")}}};
  const std::string text = to_json_text(bad);
  BOOST_TEST(text == "[\"ok \xEF\xBF\xBD\xEF\xBF\xBD end\"]");
  const auto back = std::get<JsonArray>(parse_json(text).data);
  BOOST_TEST(std::get<std::string>(back.at(0).data) == "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
}
