// core/text: UTF-8 checked, repaired and cut at character boundaries; names refused
// with the reason.
#define BOOST_TEST_MODULE core_text
#include <boost/test/unit_test.hpp>
#include <random>

#include "core/text.hpp"

namespace core = slurmtune::core;

BOOST_AUTO_TEST_CASE(validity_follows_unicode_table_3_7) {
  BOOST_TEST(core::is_valid_utf8("plain ascii"));
  BOOST_TEST(core::is_valid_utf8("\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82"));  // Привет
  BOOST_TEST(core::is_valid_utf8("\xE6\x97\xA5\xE6\x9C\xAC"));                          // 日本
  BOOST_TEST(core::is_valid_utf8("\xF0\x9F\x98\x80"));                                  // 😀
  BOOST_TEST(!core::is_valid_utf8("\xD0"));              // cut in two
  BOOST_TEST(!core::is_valid_utf8("\xC0\xAF"));          // overlong '/'
  BOOST_TEST(!core::is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  BOOST_TEST(!core::is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  BOOST_TEST(!core::is_valid_utf8("caf\xE9"));           // Latin-1
}

BOOST_AUTO_TEST_CASE(encodes_code_points_and_replaces_what_utf8_cannot_hold) {
  BOOST_TEST(core::utf8_encode(U'A') == "A");
  BOOST_TEST(core::utf8_encode(0xE9) == "\xC3\xA9");
  BOOST_TEST(core::utf8_encode(0x65E5) == "\xE6\x97\xA5");
  BOOST_TEST(core::utf8_encode(0x1F600) == "\xF0\x9F\x98\x80");
  BOOST_TEST(core::utf8_encode(0xD800) == "\xEF\xBF\xBD");
  BOOST_TEST(core::utf8_encode(0x110000) == "\xEF\xBF\xBD");
  for (char32_t cp : {0x7FU, 0x80U, 0x7FFU, 0x800U, 0xFFFFU, 0x10000U, 0x10FFFFU})
    BOOST_TEST(core::is_valid_utf8(core::utf8_encode(cp)));
}

BOOST_AUTO_TEST_CASE(repair_replaces_bad_bytes_and_drops_nul) {
  BOOST_TEST(core::repair_utf8("caf\xE9!") == "caf\xEF\xBF\xBD!");
  BOOST_TEST(core::repair_utf8(std::string("a\0b", 3)) == "ab");
  BOOST_TEST(core::repair_utf8("\xE6\x97\xA5") == "\xE6\x97\xA5");
}

BOOST_AUTO_TEST_CASE(fit_cuts_at_a_boundary_and_marks_the_cut) {
  BOOST_TEST(core::fit_utf8("short", 16) == "short");
  // 日本語 is 9 bytes; 8 bytes leave room for one character and the 3-byte marker.
  BOOST_TEST(core::fit_utf8("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 8) ==
             std::string("\xE6\x97\xA5") + std::string(core::kCutMarker));
  BOOST_TEST(core::fit_utf8("abcdef", 5) == "ab" + std::string(core::kCutMarker));
  BOOST_TEST(core::fit_utf8("abcdef", 2).empty());
}

BOOST_AUTO_TEST_CASE(fit_always_gives_valid_utf8_within_the_size) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 80), size(0, 40);
  for (int i = 0; i < 20000; ++i) {
    std::string text(static_cast<std::size_t>(length(random)), '\0');
    for (auto& c : text)
      c = static_cast<char>(byte(random));
    const auto max = static_cast<std::size_t>(size(random));
    const std::string fitted = core::fit_utf8(text, max);
    BOOST_TEST_REQUIRE(fitted.size() <= max);
    BOOST_TEST_REQUIRE(core::is_valid_utf8(fitted));
    BOOST_TEST_REQUIRE(fitted.find('\0') == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(names_refuse_controls_and_bidi_marks_with_the_reason) {
  BOOST_TEST(!core::name_problem("lr"));
  BOOST_TEST(!core::name_problem("cost_$_usd_$"));
  BOOST_TEST(!core::name_problem("<!--<script>"));
  BOOST_TEST(!core::name_problem("\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D"));  // Hebrew letters
  BOOST_TEST(*core::name_problem("") == "must not be empty");
  BOOST_TEST(core::name_problem(std::string("a\0b", 3))->find("U+0000 at byte 1") !=
             std::string::npos);
  BOOST_TEST(core::name_problem("a\nb")->find("control character U+000A") != std::string::npos);
  BOOST_TEST(core::name_problem("a\x7F")->find("U+007F") != std::string::npos);
  BOOST_TEST(core::name_problem("a\xC2\x85")->find("U+0085") != std::string::npos);  // NEL
  BOOST_TEST(core::name_problem("x\xE2\x80\xAEy")->find("bidirectional control U+202E") !=
             std::string::npos);
  BOOST_TEST(core::name_problem("x\xE2\x81\xA6y")->find("U+2066") != std::string::npos);
  BOOST_TEST(core::name_problem("caf\xE9")->find("not valid UTF-8") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(visible_escapes_what_names_may_not_hold) {
  BOOST_TEST(core::visible("a\nb\xE2\x80\xAE") == "a\\u000Ab\\u202E");
  BOOST_TEST(core::visible("caf\xE9") == "caf\xEF\xBF\xBD");
  BOOST_TEST(core::visible("\xE6\x97\xA5") == "\xE6\x97\xA5");
}

// Issue #41 (18): a failed trial's stored error keeps its first line and the end of the
// rest, where Python prints the exception, cut between whole characters.
BOOST_AUTO_TEST_CASE(an_error_keeps_its_first_line_and_its_end) {
  const std::string traceback = "exit status 1\nTraceback (most recent call last):\n" +
                                std::string(3000, 'x') + "\nValueError: bad lr";
  const std::string kept = slurmtune::core::fit_utf8_head_and_end(traceback, 512);
  BOOST_TEST(kept.size() <= 512U);
  BOOST_TEST(kept.find("exit status 1\n\xE2\x80\xA6") == 0U, kept);
  BOOST_TEST(kept.substr(kept.size() - 18) == "ValueError: bad lr");
  BOOST_TEST(slurmtune::core::fit_utf8_head_and_end("short", 512) == "short");
  std::string cyrillic;  // two bytes a character: never cut in two
  for (int i = 0; i < 400; ++i)
    cyrillic += "\xD0\xB4";
  const std::string cut = slurmtune::core::fit_utf8_head_and_end(cyrillic, 100);
  BOOST_TEST(cut.size() <= 100U);
  BOOST_TEST(slurmtune::core::repair_utf8(cut) == cut);
  BOOST_TEST(cut.find("\xE2\x80\xA6") != std::string::npos);
}
