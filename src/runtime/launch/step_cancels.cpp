#include "runtime/launch/step_cancels.hpp"

#include <algorithm>
#include <csignal>
#include <thread>

#include "core/number_text.hpp"
#include "runtime/log.hpp"

namespace slurmtune::runtime {

void StepCancels::cancel(const std::string& step, Clock::time_point now) {
  ++asked_;
  poll(now);  // room for it, when earlier ones ended
  if (running_.size() < kAtOnce)
    start(step, now);
  else
    waiting_.push_back(step);
}

void StepCancels::start(const std::string& step, Clock::time_point now) {
  try {
    running_.push_back(Running{
        step, ChildProcess::spawn(SpawnRequest{{scancel_, "--signal=KILL", step}, {}, {}, {}, {}}),
        now + wait_limit_});
  } catch (const std::exception& e) {
    // scancel missing: the SIGKILL to srun still ends the step's launcher.
    log_line("cannot cancel Slurm step " + step + ": " + e.what());
  }
}

void StepCancels::poll(Clock::time_point now) {
  std::erase_if(running_, [&](Running& r) {
    if (const auto& status = r.process.poll()) {
      if (!status->success())
        log_line("scancel of Slurm step " + r.step + " ended with " + status->describe());
      return true;
    }
    if (now < r.deadline) return false;
    log_line("scancel of Slurm step " + r.step + " did not return within " +
             core::format_double(std::chrono::duration<double>(wait_limit_).count()) +
             " s (slurmctld busy or down?); ended it");
    r.process.signal_group(SIGKILL);
    r.process.wait();
    return true;
  });
  while (running_.size() < kAtOnce && !waiting_.empty()) {
    start(waiting_.front(), now);
    waiting_.pop_front();
  }
}

void StepCancels::finish() {
  constexpr std::chrono::milliseconds kPollEvery{20};
  const auto give_up = Clock::now() + wait_limit_;
  while (pending() > 0 && Clock::now() < give_up) {
    poll();
    if (pending() > 0) std::this_thread::sleep_for(kPollEvery);
  }
  if (!waiting_.empty())
    log_line(std::to_string(waiting_.size()) + " Slurm step(s) not cancelled: the session ends " +
             "(Slurm ends their tasks with the job)");
  waiting_.clear();
  poll(Clock::time_point::max());  // ends those still running, each said in the log
}

}  // namespace slurmtune::runtime
