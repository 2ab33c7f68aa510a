#include "core/placement/device_pool.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace slurmtune::core {

DevicePool::DevicePool(std::vector<std::string> devices, std::int64_t trials_per_device)
    : devices_(std::move(devices)), users_(devices_.size(), 0), shares_(trials_per_device) {
  if (shares_ < 1)
    throw InputError("trials per GPU must be at least 1, not " + std::to_string(shares_));
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].empty())
      throw InputError("GPU list '" + join_devices(devices_) + "': an empty device name");
    if (std::find(devices_.begin(), devices_.begin() + static_cast<std::ptrdiff_t>(i),
                  devices_[i]) != devices_.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError("GPU list '" + join_devices(devices_) + "': device " + devices_[i] +
                       " is listed twice");
  }
}

std::optional<std::vector<std::string>> DevicePool::acquire(std::int64_t count) {
  if (count <= 0) return std::vector<std::string>{};
  std::vector<std::size_t> order(devices_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return users_[a] < users_[b]; });
  std::vector<std::size_t> chosen;
  for (const std::size_t d : order)
    if (users_[d] < shares_ && static_cast<std::int64_t>(chosen.size()) < count)
      chosen.push_back(d);
  if (static_cast<std::int64_t>(chosen.size()) < count) return std::nullopt;
  // In device order, so that a trial's local ranks map to its devices predictably.
  std::sort(chosen.begin(), chosen.end());
  std::vector<std::string> out;
  for (const std::size_t d : chosen) {
    ++users_[d];
    out.push_back(devices_[d]);
  }
  return out;
}

void DevicePool::release(const std::vector<std::string>& devices) {
  for (const auto& name : devices) {
    const auto it = std::find(devices_.begin(), devices_.end(), name);
    if (it == devices_.end()) throw UsageError("released GPU " + name + " is not in the pool");
    auto& users = users_[static_cast<std::size_t>(it - devices_.begin())];
    if (users == 0) throw UsageError("GPU " + name + " released more often than acquired");
    --users;
  }
}

std::string join_devices(const std::vector<std::string>& devices) {
  std::string text;
  for (const auto& d : devices) {
    if (!text.empty()) text += ',';
    text += d;
  }
  return text;
}

}  // namespace slurmtune::core
