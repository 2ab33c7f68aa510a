#pragma once
// Names a reader cannot tell apart. Unicode writes some text in more than one way: "ｌｒ"
// (fullwidth) and "lr", "ﬁ" (a ligature) and "fi", "Å" (the Angstrom sign) and "Å". Two
// parameters or metrics so named would be two columns of the results file, two flags of
// `best --format flags`, two keys of Study.best_config() that look the same. Such names
// are compared in Unicode's compatibility form (NFKC, by ICU) and a second one is
// refused; each stays as written otherwise.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace slurmtune::config {

/// `name` (valid UTF-8) in Unicode normalization form NFKC.
std::string compatibility_form(std::string_view name);

/// The refusal of `name`, a `what` ("parameter", "metric") that reads as `twin`.
std::string lookalike_text(std::string_view what, const std::string& name, const std::string& twin);

/// Names met so far, by their compatibility form.
class LookalikeNames {
 public:
  /// Adds `name`; the earlier name it cannot be told apart from (the same in NFKC, not
  /// as written), if any.
  std::optional<std::string> add(const std::string& name);

 private:
  std::map<std::string, std::string> by_form_;
};

}  // namespace slurmtune::config
