#include "core/placement/rendezvous.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

#include "core/error.hpp"

namespace slurmtune::core {
namespace {

constexpr int kDefaultFirst = 29500;  // torch.distributed's default MASTER_PORT

std::optional<long long> number(const std::map<std::string, std::string>& env,
                                const std::string& name) {
  const auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  long long value = 0;
  const auto& text = it->second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    throw InputError(name + "='" + text + "' is not a rank number");
  return value;
}

}  // namespace

RendezvousPorts::RendezvousPorts(int first, int count, Probe usable)
    : first_(first), count_(count), usable_(std::move(usable)) {
  if (first < 1024 || count < 1 || first + count - 1 > 65535)
    throw InputError("rendezvous ports " + std::to_string(first) + "-" +
                     std::to_string(first + count - 1) + " must lie within 1024-65535");
}

std::optional<int> RendezvousPorts::acquire(const std::string& host) {
  auto& taken = taken_[host];
  for (int port = first_; port < first_ + count_; ++port) {
    if (taken.contains(port) || (usable_ && !usable_(host, port))) continue;
    taken.insert(port);
    return port;
  }
  return std::nullopt;
}

void RendezvousPorts::release(const std::string& host, int port) {
  const auto it = taken_.find(host);
  if (it == taken_.end()) return;
  it->second.erase(port);
  if (it->second.empty()) taken_.erase(it);
}

int rendezvous_base(std::uint64_t salt, int count, const EphemeralPorts& ephemeral) {
  // Windows of `count` ports aligned from the start of each stretch they may use: from
  // 29500 up to the ephemeral ports, and from past them up to 65535.
  std::vector<int> bases;
  const auto windows = [&](int from, int to_excl) {
    for (int base = from; base + count <= to_excl; base += count)
      bases.push_back(base);
  };
  const bool overlaps = ephemeral.first <= 65535 && ephemeral.last >= kDefaultFirst;
  if (overlaps) {
    windows(kDefaultFirst, std::max(kDefaultFirst, ephemeral.first));
    windows(std::max(kDefaultFirst, ephemeral.last + 1), 65536);
  }
  if (bases.empty()) windows(kDefaultFirst, 65536);
  if (bases.empty()) return kDefaultFirst;  // a count past the whole stretch: refused later
  return bases[static_cast<std::size_t>(salt % bases.size())];
}

std::pair<int, int> parse_port_range(const std::string& text) {
  const auto dash = text.find('-');
  int first = 0, last = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const bool ok = dash != std::string::npos &&
                  std::from_chars(begin, begin + dash, first).ptr == begin + dash &&
                  std::from_chars(begin + dash + 1, end, last).ptr == end && last >= first;
  if (!ok)
    throw InputError("--rendezvous-ports '" + text + "': expected FIRST-LAST, e.g. 29500-29755");
  return {first, last - first + 1};
}

std::map<std::string, std::string> rank_environment(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  if (const auto rank = number(env, "SLURM_PROCID")) {
    out["RANK"] = std::to_string(*rank);
    if (const auto local = number(env, "SLURM_LOCALID")) out["LOCAL_RANK"] = std::to_string(*local);
    if (const auto node = number(env, "SLURM_NODEID")) out["NODE_RANK"] = std::to_string(*node);
    return out;
  }
  if (const auto rank = number(env, "OMPI_COMM_WORLD_RANK")) {
    out["RANK"] = std::to_string(*rank);
    if (const auto local = number(env, "OMPI_COMM_WORLD_LOCAL_RANK"))
      out["LOCAL_RANK"] = std::to_string(*local);
    if (const auto per_node = number(env, "LOCAL_WORLD_SIZE"); per_node && *per_node > 0)
      out["NODE_RANK"] = std::to_string(*rank / *per_node);
  }
  return out;
}

}  // namespace slurmtune::core
