#include "config/name_forms.hpp"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace slurmtune::config {
namespace {

void check_icu(UErrorCode status, const char* what) {
  if (U_FAILURE(status)) throw Error(std::string("ICU ") + what + ": " + u_errorName(status));
}

std::u16string to_utf16(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strFromUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (status != U_BUFFER_OVERFLOW_ERROR) check_icu(status, "u_strFromUTF8");
  std::u16string out(static_cast<std::size_t>(length), u'\0');
  status = U_ZERO_ERROR;
  u_strFromUTF8(out.data(), length, nullptr, text.data(), static_cast<int32_t>(text.size()),
                &status);
  check_icu(status, "u_strFromUTF8");
  return out;
}

std::string to_utf8(const std::u16string& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strToUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (status != U_BUFFER_OVERFLOW_ERROR) check_icu(status, "u_strToUTF8");
  std::string out(static_cast<std::size_t>(length), '\0');
  status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), length, nullptr, text.data(), static_cast<int32_t>(text.size()), &status);
  check_icu(status, "u_strToUTF8");
  return out;
}

}  // namespace

std::string compatibility_form(std::string_view name) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* nfkc = unorm2_getNFKCInstance(&status);  // owned by ICU, never freed
  check_icu(status, "unorm2_getNFKCInstance");
  const std::u16string source = to_utf16(name);
  const auto length = static_cast<int32_t>(source.size());
  // NFKC can lengthen text (U+FDFA becomes 18 code units), so the size is asked first.
  int32_t needed = unorm2_normalize(nfkc, source.data(), length, nullptr, 0, &status);
  if (status != U_BUFFER_OVERFLOW_ERROR) check_icu(status, "unorm2_normalize");
  std::u16string normal(static_cast<std::size_t>(needed), u'\0');
  status = U_ZERO_ERROR;
  unorm2_normalize(nfkc, source.data(), length, normal.data(), needed, &status);
  check_icu(status, "unorm2_normalize");
  return to_utf8(normal);
}

std::string lookalike_text(std::string_view what, const std::string& name,
                           const std::string& twin) {
  return "the " + std::string(what) + " name '" + core::visible(name) + "' reads as " +
         std::string(what) + " '" + core::visible(twin) +
         "' (the same in Unicode's compatibility form, NFKC: '" +
         core::visible(compatibility_form(name)) +
         "'); a reader cannot tell the two apart. Rename one, in plain letters";
}

std::optional<std::string> LookalikeNames::add(const std::string& name) {
  const auto [at, added] = by_form_.emplace(compatibility_form(name), name);
  if (added || at->second == name) return std::nullopt;
  return at->second;
}

}  // namespace slurmtune::config
