// A C++ trial using the report client: minimises (x - 0.3)^2 + 1/step, stops when the
// study says so, checkpoints its step when asked and resumes from it.
#include <fstream>
#include <iostream>
#include <slurmtune/client.hpp>
#include <string>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::stoi(argv[1]) : 9;
  try {
    auto client = slurmtune::Client::from_environment();
    const double x = client.param<double>("x");
    int first = 1;
    if (const std::string resume = client.resume_checkpoint(); !resume.empty()) {
      std::ifstream(resume) >> first;
      ++first;
    }
    const std::string checkpoint = client.checkpoint_dir() + "/step.txt";
    for (int step = first; step <= steps; ++step) {
      const double loss = (x - 0.3) * (x - 0.3) + 1.0 / step;
      const auto decision = client.report(step, {{"loss", loss}});
      if (client.should_checkpoint()) {
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
