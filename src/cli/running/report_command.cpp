// slurmtune report --step N name=value...: the report client for shell-script trials.
#include <charconv>
#include <iostream>

#include "cli/options.hpp"
#include "core/error.hpp"
#include "slurmtune/client.hpp"

namespace slurmtune::cli {
namespace {

std::pair<std::string, double> metric_of(const std::string& word) {
  const auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("'" + word + "' is not NAME=VALUE (e.g. val_loss=0.41)");
  const std::string value = word.substr(eq + 1);
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    throw InputError("'" + word + "': '" + value + "' is not a number");
  return {word.substr(0, eq), v};
}

}  // namespace

int report_command(const Args& args) {
  po::options_description options("report options");
  options.add_options()("step", po::value<double>(), "the step (epoch, iteration) reported")(
      "ask", "print the current decision without reporting (ranks other than 0)")(
      "heartbeat",
      "say \"still alive\" during a long step ([trial] report_timeout_s); prints nothing")(
      "metric", po::value<std::vector<std::string>>()->composing(), "NAME=VALUE");
  po::positional_options_description positional;
  positional.add("metric", -1);
  po::variables_map vm;
  if (!parse_options(args,
                     "slurmtune report --step N NAME=VALUE...  (exit 0 continue, 3 stop, 4 pause)",
                     options, positional, vm))
    return kSuccess;
  const bool ask = vm.count("ask") > 0;
  if (vm.count("heartbeat")) {
    try {
      auto client = Client::from_environment();
      client.heartbeat();
    } catch (const ClientError& e) {
      throw Error(e.what());
    }
    return kSuccess;
  }
  std::map<std::string, double> metrics;
  if (!ask) {
    if (!vm.count("step")) throw po::required_option("step");
    if (vm.count("metric"))
      for (const auto& word : vm["metric"].as<std::vector<std::string>>())
        metrics.insert(metric_of(word));
    if (metrics.empty()) throw InputError("give at least one NAME=VALUE");
  }
  Decision decision = Decision::Continue;
  try {
    auto client = Client::from_environment();
    decision = ask ? client.ask() : client.report(vm["step"].as<double>(), metrics);
    // The shell script decides how it ends; BYE is for programs that keep a connection.
  } catch (const ClientError& e) {
    throw Error(e.what());
  }
  std::cout << (decision == Decision::Continue ? "continue"
                : decision == Decision::Stop   ? "stop"
                                               : "pause")
            << '\n';
  return decision == Decision::Continue ? kSuccess : decision == Decision::Stop ? kStop : kPause;
}

}  // namespace slurmtune::cli
