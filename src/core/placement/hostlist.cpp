#include "core/placement/hostlist.hpp"

#include <cctype>
#include <charconv>
#include <optional>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {

[[noreturn]] void fail(std::string_view text, std::size_t at, const std::string& what) {
  throw InputError("hostlist \"" + std::string(text) + "\" at column " + std::to_string(at + 1) +
                   ": " + what);
}

// No allocation has this many nodes; a list that expands further ("r[0-999999]n[0-999999]")
// is refused before it exhausts memory.
constexpr std::size_t kMaxHosts = 1000000;

// The whole of `text` as a non-negative integer, or nullopt.
std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Calls visit(item, offset) for every comma-separated item of `text`, empty ones included.
template <class Visit>
void for_each_item(std::string_view text, Visit visit) {
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    visit(text.substr(start, comma - start), start);
    start = comma + 1;
  }
}

std::uint64_t parse_number(std::string_view text, std::string_view whole, std::size_t at) {
  const auto v = whole_number(text);
  if (!v) fail(whole, at, "expected a number, found \"" + std::string(text) + "\"");
  return *v;
}

std::string padded(std::uint64_t v, std::size_t width) {
  std::string digits = std::to_string(v);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Values of one bracket body "1-3,07,10-12" as strings with their padding.
std::vector<std::string> expand_ranges(std::string_view body, std::string_view whole,
                                       std::size_t at) {
  std::vector<std::string> out;
  for_each_item(body, [&](std::string_view item, std::size_t offset) {
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      parse_number(item, whole, at + offset);
      out.emplace_back(item);
      return;
    }
    const std::string_view lo = item.substr(0, dash), hi = item.substr(dash + 1);
    const auto a = parse_number(lo, whole, at + offset), b = parse_number(hi, whole, at + offset);
    if (a > b) fail(whole, at + offset, "range " + std::string(item) + " runs backwards");
    if (b - a >= kMaxHosts || out.size() + (b - a) >= kMaxHosts)
      fail(whole, at + offset, "range " + std::string(item) + " is too large");
    for (std::uint64_t v = a; v <= b; ++v)
      out.push_back(padded(v, lo.size()));
  });
  return out;
}

// Expands one host expression (no top-level commas), e.g. "r[1-2]n[01-02]".
void expand_one(std::string_view expr, std::string_view whole, std::size_t at,
                std::vector<std::string>& out) {
  std::vector<std::string> partial = {""};
  std::size_t i = 0;
  while (i < expr.size()) {
    const std::size_t open = expr.find('[', i);
    const std::string_view literal =
        expr.substr(i, open == std::string_view::npos ? expr.npos : open - i);
    if (literal.find(']') != std::string_view::npos) fail(whole, at + i, "unexpected ']'");
    for (auto& p : partial)
      p += literal;
    if (open == std::string_view::npos) break;
    const std::size_t close = expr.find(']', open);
    if (close == std::string_view::npos) fail(whole, at + open, "unclosed '['");
    const auto values =
        expand_ranges(expr.substr(open + 1, close - open - 1), whole, at + open + 1);
    if (partial.size() * values.size() + out.size() > kMaxHosts)
      fail(whole, at + open, "expands to more than " + std::to_string(kMaxHosts) + " hosts");
    std::vector<std::string> next;
    for (const auto& p : partial)
      for (const auto& v : values) {
        next.push_back(p);
        next.back() += v;
      }
    partial = std::move(next);
    i = close + 1;
  }
  if (expr.empty()) fail(whole, at, "empty host name");
  if (out.size() + partial.size() > kMaxHosts)
    fail(whole, at, "expands to more than " + std::to_string(kMaxHosts) + " hosts");
  out.insert(out.end(), partial.begin(), partial.end());
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view hostlist) {
  std::vector<std::string> out;
  std::size_t start = 0, depth = 0;
  for (std::size_t i = 0; i <= hostlist.size(); ++i) {
    const char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') {
      if (depth == 0) fail(hostlist, i, "unexpected ']'");
      --depth;
    }
    if (c == ',' && depth == 0) {
      if (i > start || i < hostlist.size())
        expand_one(hostlist.substr(start, i - start), hostlist, start, out);
      start = i + 1;
    }
  }
  if (depth != 0) fail(hostlist, hostlist.size(), "unclosed '['");
  return out;
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  // Group consecutive hosts sharing a prefix and a numeric suffix of equal width.
  struct Group {
    std::string prefix;
    std::size_t width = 0;
    std::vector<std::uint64_t> numbers;
  };
  std::vector<Group> groups;
  for (const auto& h : hosts) {
    std::size_t digits = 0;
    while (digits < h.size() && std::isdigit(static_cast<unsigned char>(h[h.size() - 1 - digits])))
      ++digits;
    if (digits == 0 || digits > 18) {
      groups.push_back({h, 0, {}});
      continue;
    }
    const std::string prefix = h.substr(0, h.size() - digits);
    const std::uint64_t n = std::stoull(h.substr(h.size() - digits));
    if (!groups.empty() && groups.back().width == digits && groups.back().prefix == prefix)
      groups.back().numbers.push_back(n);
    else
      groups.push_back({prefix, digits, {n}});
  }
  std::string out;
  for (const auto& g : groups) {
    if (!out.empty()) out += ',';
    if (g.numbers.empty()) {
      out += g.prefix;
      continue;
    }
    if (g.numbers.size() == 1) {
      out += g.prefix;
      out += padded(g.numbers[0], g.width);
      continue;
    }
    out += g.prefix;
    out += '[';
    for (std::size_t i = 0; i < g.numbers.size();) {
      std::size_t j = i;
      while (j + 1 < g.numbers.size() && g.numbers[j + 1] == g.numbers[j] + 1)
        ++j;
      if (i) out += ',';
      out += padded(g.numbers[i], g.width);
      if (j > i) {
        out += '-';
        out += padded(g.numbers[j], g.width);
      }
      i = j + 1;
    }
    out += "]";
  }
  return out;
}

std::vector<std::int64_t> expand_counts(std::string_view counts) {
  std::vector<std::int64_t> out;
  for_each_item(counts, [&](std::string_view item, std::size_t) {
    const auto bad = [&] {
      return InputError("per-node counts \"" + std::string(counts) + "\": bad item \"" +
                        std::string(item) + "\" (expected N or N(xM))");
    };
    const std::size_t paren = item.find("(x");
    const auto value = whole_number(item.substr(0, paren));
    std::optional<std::uint64_t> repeat = 1;
    if (paren != std::string_view::npos)
      repeat = item.ends_with(')') ? whole_number(item.substr(paren + 2, item.size() - paren - 3))
                                   : std::nullopt;
    if (!value || !repeat || *repeat > 1000000) throw bad();
    out.insert(out.end(), static_cast<std::size_t>(*repeat), static_cast<std::int64_t>(*value));
  });
  return out;
}

}  // namespace slurmtune::core
