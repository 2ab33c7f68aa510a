// A C++ trial using the report client: minimises (x - 0.3)^2 + 1/step, stops when the
// study says so, checkpoints its step when asked and resumes from it; after each report
// it ASKs, as a rank other than 0 would, and checks the answer is the same decision.
//   cpp_trial STEPS [INTERRUPTED_TRIAL [STEP_SECONDS [term-while-saving]]]
// INTERRUPTED_TRIAL's first attempt sends itself SIGTERM (as scancel would) before its
// report of step 2; it reports the best loss, so no scheduler decision ends it first
// (-1: none). Each step takes STEP_SECONDS (default 0). With term-while-saving, a trial
// told to stop or pause with a checkpoint sends itself SIGTERM before saving it, as
// scancel does to a step that the coordinator's "suspend" has just reached.
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <slurmtune/client.hpp>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 9;
  const long interrupted = argc > 2 ? std::stol(argv[2]) : -1;
  const double step_seconds = argc > 3 ? std::stod(argv[3]) : 0.0;
  const bool term_while_saving = argc > 4 && std::string(argv[4]) == "term-while-saving";
  try {
    auto client = slurmtune::Client::from_environment();
    const double x = client.param<double>("x");
    if (!client.has_param("x") || client.has_param("nope")) {  // a conditional space asks so
      std::cerr << "has_param(\"x\") or has_param(\"nope\") is wrong\n";
      return 1;
    }
    const bool chosen = static_cast<long>(client.trial_id()) == interrupted;
    int first = 1;
    if (const std::string resume = client.resume_checkpoint(); !resume.empty()) {
      std::ifstream(resume) >> first;
      std::cout << "resumed from step " << first << '\n';
      ++first;
    }
    const std::string checkpoint = client.checkpoint_dir() + "/step.txt";
    for (int step = first; step <= steps; ++step) {
      std::this_thread::sleep_for(std::chrono::duration<double>(step_seconds));
      const double loss = chosen ? -1.0 : (x - 0.3) * (x - 0.3) + 1.0 / step;
      if (chosen && client.attempt() == 0 && step == 2) std::raise(SIGTERM);
      const auto decision = client.report(step, {{"loss", loss}});
      if (client.terminated()) std::cout << "interrupted by SIGTERM at step " << step << '\n';
      // What a rank other than 0 would do: ASK gives the decision the report got.
      if (!client.terminated() && client.ask() != decision) {
        std::cerr << "cpp_trial: ASK answered otherwise than REPORT at step " << step << '\n';
        return 3;
      }
      if (client.should_checkpoint()) {
        if (term_while_saving && decision != slurmtune::Decision::Continue) std::raise(SIGTERM);
        std::ofstream(checkpoint) << step;
        client.checkpoint_saved(step, checkpoint);
      }
      if (decision != slurmtune::Decision::Continue) break;
    }
    client.finish(true);
  } catch (const slurmtune::ClientError& e) {
    std::cerr << "cpp_trial: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
