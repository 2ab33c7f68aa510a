#include "runtime/job_clock.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/study/allocation_clock.hpp"
#include "runtime/child_process.hpp"

namespace slurmtune::runtime {
namespace {

std::string lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// squeue answers from slurmctld; a controller that does not answer must not stall the
// orchestrator's start.
constexpr auto kSqueueWait = std::chrono::seconds(10);

}  // namespace

TimeLeft slurm_time_left(const std::map<std::string, std::string>& env, const std::string& scratch,
                         const std::string& squeue) {
  const std::string job = lookup(env, "SLURM_JOB_ID");
  if (job.empty()) return {std::nullopt, "not in a Slurm job"};
  if (const std::string end = lookup(env, "SLURM_JOB_END_TIME"); !end.empty()) {
    try {
      return {std::stod(end) - static_cast<double>(std::time(nullptr)), "SLURM_JOB_END_TIME"};
    } catch (const std::exception&) {
      // Malformed: ask squeue instead.
    }
  }
  std::filesystem::remove(scratch);
  ChildProcess child;
  try {
    child = ChildProcess::spawn(
        SpawnRequest{{squeue, "-h", "-j", job, "-o", "%L"}, {}, {}, scratch, {}});
  } catch (const std::exception& e) {
    return {std::nullopt, std::string("squeue did not start: ") + e.what()};
  }
  const auto deadline = std::chrono::steady_clock::now() + kSqueueWait;
  while (!child.poll() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!child.status()) return {std::nullopt, "squeue did not answer within 10 s"};
  std::ifstream in(scratch);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(scratch);
  std::string answer = text.str();
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == ' '))
    answer.pop_back();
  const auto seconds = core::parse_slurm_time_left(answer);
  if (!seconds) return {std::nullopt, "squeue: no time limit (" + answer + ")"};
  return {seconds, "squeue"};
}

}  // namespace slurmtune::runtime
