#include "runtime/launch/local_gpus.hpp"

#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "protocol/wire/protocol.hpp"

namespace slurmtune::runtime {
namespace {

std::vector<std::string> numbered(std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i)
    out.push_back(std::to_string(i));
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    out.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<std::string> cuda_visible_devices(const std::string& value) {
  std::vector<std::string> devices;
  for (const auto& d : split_list(value)) {
    if (d.empty() || d == "-1" || d == "NoDevFiles") break;
    devices.push_back(d);
  }
  return devices;
}

LocalGpus find_local_gpus(const std::string& option, const std::map<std::string, std::string>& env,
                          const std::string& driver_dir) {
  if (!option.empty()) {
    if (all_digits(option) && option.size() < 6)
      return {numbered(std::stoul(option)), "--gpus " + option};
    const auto devices = split_list(option);
    for (const auto& d : devices)
      if (d.empty() || d.find_first_of(" \t") != std::string::npos)
        throw InputError("--gpus '" + option +
                         "': give a count (--gpus 4) or a comma-separated list of devices "
                         "(--gpus 0,2 or GPU UUIDs)");
    return {devices, "--gpus " + option};
  }
  if (const auto visible = env.find("CUDA_VISIBLE_DEVICES"); visible != env.end())
    return {cuda_visible_devices(visible->second),
            "CUDA_VISIBLE_DEVICES='" + visible->second + "'"};
  std::error_code error;
  std::size_t count = 0;
  for (std::filesystem::directory_iterator it(driver_dir, error), end; !error && it != end;
       it.increment(error))
    ++count;
  if (count > 0) return {numbered(count), "the NVIDIA driver (" + driver_dir + ")"};
  return {{}, "no --gpus, no CUDA_VISIBLE_DEVICES and no NVIDIA driver"};
}

std::string visible_devices_for(const std::vector<std::string>& positions,
                                const std::string& worker_visible) {
  const auto mine = cuda_visible_devices(worker_visible);
  std::string out;
  for (const auto& position : positions) {
    std::string device = position;
    if (!worker_visible.empty()) {  // set: the devices it names, maybe none ("-1")
      std::size_t index = mine.size();
      try {
        index = std::stoul(position);
      } catch (const std::exception&) {
      }
      if (index >= mine.size())
        throw protocol::ProtocolError("GPU " + position + " asked of a worker that has " +
                                      std::to_string(mine.size()) + " (CUDA_VISIBLE_DEVICES='" +
                                      worker_visible + "')");
      device = mine[index];
    }
    if (!out.empty()) out += ',';
    out += device;
  }
  return out;
}

}  // namespace slurmtune::runtime
