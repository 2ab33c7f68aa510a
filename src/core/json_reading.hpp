#pragma once
// Reading JSON text with simdjson's on-demand API as Python's json module writes it,
// for replay's event lines (schedulers/replay_event.hpp) and the control plane's
// payloads (protocol/wire/json_value.hpp); the library was chosen by measurement
// (doc/performance/control-plane.md#json-readers-issue-27-4-choose-a-library-by-measurement). What
// simdjson 3.0 does not read, this adds:
// - NaN, Infinity and -Infinity are numbers (a diverged loss is a result);
// - a number beyond a double reads as Python reads it (1e400 is Infinity, 1e-400 is 0);
// - a lone \uD800-\uDFFF escape (Python writes one for each byte of a file name that is
//   not UTF-8) becomes U+FFFD instead of refusing the whole text.
// Every error is an InputError "invalid JSON at column N: why".
#include <simdjson.h>

#include <string>
#include <string_view>

namespace slurmtune::core::json_reading {

namespace od = simdjson::ondemand;

/// Starts reading `text` where it is; its capacity grows by the padding simdjson reads
/// past the end. InputError "invalid JSON at column 1: why" when it cannot start.
od::document iterate_in_place(od::parser& parser, std::string& text);

/// Reads the values of one document, naming the column where the text breaks.
class ValueReader {
 public:
  /// `text`: what iterate_in_place() reads (without the padding).
  ValueReader(od::document& doc, std::string_view text) : doc_(doc), text_(text) {}

  [[noreturn]] void fail(simdjson::error_code error) const;
  [[noreturn]] void fail(const std::string& why) const;
  template <class T>
  T take(simdjson::simdjson_result<T> result) const {
    T out;
    if (const auto error = std::move(result).get(out)) fail(error);
    return out;
  }

  /// The value's type, where NaN, Infinity and -Infinity are numbers; fails on a token
  /// that is no JSON value ("expected a value, not 'oops'").
  od::json_type type(od::value& value) const;
  /// A value of type number.
  double number(od::value& value) const;
  /// A value of type string; valid until the next value is read (it may live in `scratch`).
  std::string_view string(od::value& value, std::string& scratch) const;
  /// A field's key, unescaped, as string() reads it.
  std::string_view key(od::field& field, std::string& scratch) const;
  /// A value of type boolean (fails on a token such as `tru`).
  bool boolean(od::value& value) const;
  /// A value of type null (fails on a token such as `nul`).
  void null(od::value& value) const;
  /// Fails unless nothing but blanks follows the document's value.
  void expect_end() const;

 private:
  od::document& doc_;
  std::string_view text_;
};

}  // namespace slurmtune::core::json_reading
