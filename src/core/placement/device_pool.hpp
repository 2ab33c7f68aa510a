#pragma once
// The GPUs of one workstation, handed out to trials by the local launcher: each trial
// gets distinct devices (named as CUDA_VISIBLE_DEVICES names them: "0", "2",
// "GPU-<uuid>") and sees only those. A device is given to `trials_per_device` trials at
// once at most: 1 unless the user asked to share GPUs between small trials.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace slurmtune::core {

class DevicePool {
 public:
  /// Throws InputError on an empty or repeated device name, or trials_per_device < 1.
  DevicePool(std::vector<std::string> devices, std::int64_t trials_per_device);

  /// `count` distinct devices with a free share, or nullopt when that many are not free
  /// now. The least used devices first (then the lowest index), which keeps every trial
  /// placeable while shares remain.
  std::optional<std::vector<std::string>> acquire(std::int64_t count);
  /// Returns what acquire() gave.
  void release(const std::vector<std::string>& devices);

  std::size_t size() const { return devices_.size(); }
  const std::vector<std::string>& devices() const { return devices_; }
  std::int64_t trials_per_device() const { return shares_; }

 private:
  std::vector<std::string> devices_;
  std::vector<std::int64_t> users_;  // trials on each device now
  std::int64_t shares_;
};

/// "0,1,3" for CUDA_VISIBLE_DEVICES.
std::string join_devices(const std::vector<std::string>& devices);

}  // namespace slurmtune::core
