// Control-plane throughput of `slurmtune run`: CLIENTS concurrent connections, each a
// trial's rank 0 in lock-step (one report outstanding, the next sent when its DECISION
// arrives), against a real coordinator that decodes, authenticates, judges every report
// with the study's scheduler, answers it and writes it to the results file.
//
// The trials the coordinator launches are `sleep` processes; this program speaks for
// them over the real protocol with their token. One load-generator process drives all
// connections, so the figure measures the coordinator rather than the kernel switching
// between 64 client processes on a 2-core machine (tests/bench/report_client runs the
// same load as 64 real processes; doc/performance.md gives both).
//   bench_control_plane SLURMTUNE [CLIENTS=64] [REPORTS=5000] [SCHEDULER=fifo]
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/wire/protocol.hpp"
#include "protocol/wire/secret.hpp"
#include "store/study_reader.hpp"

namespace fs = std::filesystem;
using namespace slurmtune;

namespace {

// Trial `t`'s credential: its file in the credentials folder (trial-T.launch-L), waited
// for up to 30 s while the coordinator launches the trials.
std::string credential_of(const fs::path& folder, int t) {
  const std::string prefix = "trial-" + std::to_string(t) + ".launch-";
  for (int tries = 0; tries < 300; ++tries) {
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(folder, ignored))
      if (entry.path().filename().string().starts_with(prefix))
        return protocol::read_token_file(entry.path().string());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("no credential of trial " + std::to_string(t) + " in " +
                           folder.string());
}

int connect_to(const std::string& address) {
  const auto colon = address.rfind(':');
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(address.substr(0, colon).c_str(), address.substr(colon + 1).c_str(), &hints,
                  &found) != 0)
    return -1;
  const int fd = socket(found->ai_family, SOCK_STREAM, 0);
  const int rc = connect(fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  return rc == 0 ? fd : -1;
}

struct Connection {
  int fd = -1;
  protocol::FrameDecoder decoder;
  int step = 0;
};

void send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    sent += static_cast<std::size_t>(n);
  }
}

std::string report(int step, int trial) {
  // Values differ between trials (and ties are rare), so ASHA stops some at each rung.
  return protocol::encode_frame(
      protocol::MessageType::Report,
      "{\"step\": " + std::to_string(step) + ", \"metrics\": {\"loss\": " +
          std::to_string(((step + 31 * trial) * 7919 % 1009) / 1009.0) + "}}");
}

// The coordinator's address, once its log says that every trial has been launched.
std::string address_from_log(const fs::path& log, int clients) {
  const std::string last_start = "trial " + std::to_string(clients - 1) + " start";
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(log);
    std::string address;
    bool all_started = false;
    for (std::string line; std::getline(in, line);) {
      if (const auto at = line.find("control plane on "); at != std::string::npos)
        address = line.substr(at + 17, line.find(',', at) - at - 17);
      all_started = all_started || line.find(last_start) != std::string::npos;
    }
    if (!address.empty() && all_started) return address;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("the coordinator did not start its trials; see " + log.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SLURMTUNE [CLIENTS] [REPORTS] [SCHEDULER]\n", argv[0]);
    return 2;
  }
  const std::string slurmtune = argv[1];
  const int clients = argc > 2 ? std::stoi(argv[2]) : 64;
  const int reports = argc > 3 ? std::stoi(argv[3]) : 5000;
  const std::string scheduler = argc > 4 ? argv[4] : "fifo";
  const fs::path dir =
      fs::temp_directory_path() / ("slurmtune-bench-cp-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path study = dir / "study.toml", output = dir / "study.h5", log = dir / "run.log";
  // ASHA judges at rungs 1, 4, 16, ...: most reports pass between rungs, as in real use;
  // at max_t the coordinator says "stop" (complete) and ends the sleep.
  std::ofstream(study) << "[study]\nname = \"bench\"\nmetric = \"loss\"\nmax_trials = " << clients
                       << "\n[search]\nx = { uniform = [0, 1] }\n[scheduler]\ntype = \""
                       << scheduler << "\"\nmax_t = " << reports
                       << (scheduler == "asha" ? "\ngrace_period = 1\nreduction_factor = 4\n"
                                                 "stop_last_trials = false\n"
                                               : "\n")
                       << "[trial]\ncommand = [\"sleep\", \"600\"]\n";
  const pid_t pid = fork();
  if (pid == 0) {
    freopen(log.c_str(), "w", stderr);
    execl(slurmtune.c_str(), slurmtune.c_str(), "run", study.c_str(), "-o", output.c_str(),
          "--launcher", "local", "--slots", std::to_string(clients).c_str(), "--stop-grace", "0",
          "--progress-interval", "3600", static_cast<char*>(nullptr));
    _exit(127);
  }
  const std::string address = address_from_log(log, clients);
  // The bench plays every trial's rank 0: each connection presents the credential the
  // coordinator wrote for that trial's launch, the file a trial's SLURMTUNE_TOKEN_FILE
  // names (the session's secret is written only for joined jobs).
  const fs::path credentials = dir / "study.trials" / "credentials";
  std::vector<Connection> connections(static_cast<std::size_t>(clients));
  for (int t = 0; t < clients; ++t) {
    Connection& c = connections[static_cast<std::size_t>(t)];
    c.fd = connect_to(address);
    if (c.fd < 0) throw std::runtime_error("cannot connect to " + address);
    send_all(c.fd, protocol::encode_frame(protocol::MessageType::Hello,
                                          "{\"token\": \"" + credential_of(credentials, t) +
                                              "\", \"trial\": " + std::to_string(t) +
                                              ", \"attempt\": 0}"));
  }
  std::vector<pollfd> fds;
  for (const auto& c : connections)
    fds.push_back(pollfd{c.fd, POLLIN, 0});
  std::uint64_t decisions = 0, stops = 0;
  int active = clients;
  const auto start = std::chrono::steady_clock::now();
  char buffer[65536];
  while (active > 0) {
    poll(fds.data(), fds.size(), 1000);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      Connection& c = connections[i];
      const ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
      if (n <= 0) {
        fds[i].fd = -1;
        --active;
        continue;
      }
      c.decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      while (const auto frame = c.decoder.next()) {
        if (frame->type == protocol::MessageType::Decision) {
          ++decisions;
          if (frame->payload.find("\"continue\"") == std::string::npos) ++stops;
        }
        const bool go_on = frame->type == protocol::MessageType::Welcome ||
                           frame->payload.find("\"continue\"") != std::string::npos;
        if (go_on && c.step < reports) {
          send_all(c.fd, report(++c.step, static_cast<int>(i)));
        } else {
          close(c.fd);
          fds[i].fd = -1;
          --active;
        }
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int status = 0;
  waitpid(pid, &status, 0);
  const slurmtune::store::StudyReader reader(output.string());
  std::printf(
      "clients %d  scheduler %s  decisions %llu (%llu stop/pause)  rows persisted %llu  "
      "%.3f s  %.0f reports/s\n",
      clients, scheduler.c_str(), static_cast<unsigned long long>(decisions),
      static_cast<unsigned long long>(stops), static_cast<unsigned long long>(reader.metric_rows()),
      seconds, static_cast<double>(decisions) / seconds);
  fs::remove_all(dir);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
