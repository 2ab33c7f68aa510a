// A one-rank trial for the device check's GPU packing studies (device-check.sh): it
// reports which devices it was given (CUDA_VISIBLE_DEVICES), which one CUDA shows it (PCI
// address), and the result and time of a fixed amount of work on it. Without CUDA in the
// build, or without a visible device, it reports gpu = 0 and sleeps instead of working,
// so the packing logic can be checked with a fake device list (`--gpus 2`).
//   gpu_pack_trial [--steps N] [--launches N] [--elements N] [--cpu-seconds S]
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <slurmtune/client.hpp>
#include <string>
#include <string_view>
#include <thread>

#ifdef SLURMTUNE_GPU_CHECK_CUDA
#include "gpu_work.hpp"
#endif

namespace {

struct Options {
  int steps = 3;
  int launches = 300;
  std::size_t elements = std::size_t{1} << 24;
  double cpu_seconds = 0.5;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--steps")
      options.steps = std::stoi(value);
    else if (flag == "--launches")
      options.launches = std::stoi(value);
    else if (flag == "--elements")
      options.elements = std::stoull(value);
    else if (flag == "--cpu-seconds")
      options.cpu_seconds = std::stod(value);
    else
      throw std::invalid_argument("unknown option " + std::string(flag));
  }
  return options;
}

// CUDA_VISIBLE_DEVICES as the launcher set it: how many entries, and the first as a
// number (-1 when unset or not a number, e.g. a GPU UUID).
std::pair<double, double> visible_devices() {
  const char* text = std::getenv("CUDA_VISIBLE_DEVICES");
  if (text == nullptr || *text == '\0') return {0, -1};
  const std::string value = text;
  double count = 1;
  for (const char c : value)
    count += c == ',' ? 1 : 0;
  const std::string first = value.substr(0, value.find(','));
  const bool numeric = first.find_first_not_of("0123456789") == std::string::npos;
  return {count, numeric ? std::stod(first) : -1};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    auto client = slurmtune::Client::from_environment();
    const auto [visible, device] = visible_devices();
    std::map<std::string, double> metrics{{"visible", visible}, {"device", device}, {"gpu", 0},
                                          {"cuda_devices", 0},  {"pci_bus", -1},    {"error", 0},
                                          {"seconds", 0}};
#ifdef SLURMTUNE_GPU_CHECK_CUDA
    const auto seen = slurmtune::gpu_check::seen_device();
    metrics["cuda_devices"] = seen.count;
    metrics["pci_bus"] = seen.pci_bus;
    if (seen.count > 0) {
      metrics["gpu"] = 1;
      std::cout << "gpu_pack_trial: " << seen.name << " at PCI " << seen.pci_domain << ':'
                << seen.pci_bus << ':' << seen.pci_device << '\n';
    } else {
      std::cout << "gpu_pack_trial: " << seen.error << "; sleeping instead\n";
    }
#endif
    double seconds = 0;
    for (int step = 1; step <= options.steps; ++step) {
      const auto start = std::chrono::steady_clock::now();
#ifdef SLURMTUNE_GPU_CHECK_CUDA
      if (metrics["gpu"] > 0) {
        const int launches = options.launches / options.steps;
        metrics["error"] = std::max(metrics["error"],
                                    slurmtune::gpu_check::run_kernels(options.elements, launches));
      } else
#endif
        std::this_thread::sleep_for(std::chrono::duration<double>(options.cpu_seconds));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      metrics["seconds"] = seconds;
      metrics["loss"] = client.param<double>("x") + 1.0 / step;
      if (client.report(step, metrics) != slurmtune::Decision::Continue) break;
    }
    client.finish(true);
  } catch (const std::exception& e) {
    std::cerr << "gpu_pack_trial: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
