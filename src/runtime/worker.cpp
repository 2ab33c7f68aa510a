#include "runtime/worker.hpp"

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

#include "core/json.hpp"
#include "core/search/param_value.hpp"
#include "runtime/child_process.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/local_gpus.hpp"
#include "runtime/log.hpp"
#include "runtime/message_fields.hpp"
#include "runtime/protocol.hpp"
#include "runtime/secret.hpp"
#include "runtime/tcp_connect.hpp"

namespace slurmtune::runtime {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

class Worker {
 public:
  explicit Worker(const WorkerOptions& options)
      : fd_(connect_tcp(options.address)), node_(options.node) {
    std::string hello = "{\"token\": " + core::json_quote(read_token_file(options.token_file)) +
                        ", \"worker\": " + core::json_quote(node_);
    const std::string job = env_or_empty("SLURM_JOB_ID"), step = env_or_empty("SLURM_STEP_ID");
    if (!job.empty() && !step.empty())
      hello += ", \"slurm_step\": " + core::json_quote(job + "." + step);
    send(MessageType::Hello, hello + "}");
  }

  int run() {
    EventLoop loop;
    const UniqueFd signals = make_signal_fd({SIGCHLD, SIGTERM, SIGINT});
    loop.add(signals.get(), EPOLLIN, [&](std::uint32_t) { on_signal(signals.get()); });
    loop.add(fd_.get(), EPOLLIN, [&](std::uint32_t) { on_readable(); });
    while (!closed_)
      loop.run_once(1000);
    children_.clear();  // kills and reaps what still runs
    return lost_ ? 1 : 0;
  }

 private:
  void send(MessageType type, const std::string& payload) {
    const std::string frame = encode_frame(type, payload);
    for (std::size_t sent = 0; sent < frame.size();) {
      const ssize_t n = ::send(fd_.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return lose(std::string("sending: ") + std::strerror(errno));
      sent += static_cast<std::size_t>(n);
    }
  }

  void lose(const std::string& why) {
    if (!closed_) log_line("worker " + node_ + ": lost the coordinator (" + why + ")");
    closed_ = lost_ = true;
  }

  void on_readable() {
    char buffer[65536];
    const ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) return;
    if (n == 0) {
      closed_ = true;  // the coordinator is done with this worker
      return;
    }
    if (n < 0) return lose(std::strerror(errno));
    decoder_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    try {
      while (auto frame = decoder_.next())
        on_frame(*frame);
    } catch (const std::exception& e) {  // ProtocolError, or a field of the wrong type
      lose(std::string("a malformed message: ") + e.what());
    }
  }

  void on_frame(const Frame& frame) {
    const auto body = payload_object(frame);
    switch (frame.type) {
      case MessageType::Welcome:
        log_line("worker " + node_ + ": serving the study's trials on this node");
        return;
      case MessageType::Launch:
        if (const auto* done = field(body, "done");
            done && std::holds_alternative<bool>(done->data) && std::get<bool>(done->data)) {
          closed_ = true;  // the study is over: nothing of ours runs any more
          return;
        }
        return launch(body);
      case MessageType::Signal:
        if (const auto child = children_.find(text(body, "key")); child != children_.end())
          child->second.signal_group(static_cast<int>(number(body, "signal", "SIGNAL")));
        return;
      case MessageType::Error:
        return lose("refused: " + text(body, "error"));
      default:
        throw ProtocolError("a worker does not take " + std::string(to_string(frame.type)));
    }
  }

  void launch(const core::JsonObject& body) {
    const std::string key = text(body, "key");
    const auto* argv = field(body, "argv");
    const auto* env = field(body, "env");
    if (!argv || !env) throw ProtocolError("LAUNCH without argv or env");
    SpawnRequest request;
    for (const auto& arg : std::get<core::JsonArray>(argv->data))
      request.argv.push_back(std::get<std::string>(arg.data));
    for (const auto& [name, value] : std::get<core::JsonObject>(env->data))
      request.env[name] = std::get<std::string>(value.data);
    if (const auto* gpus = field(body, "gpus");
        gpus && std::holds_alternative<core::JsonArray>(gpus->data)) {
      std::vector<std::string> positions;
      for (const auto& g : std::get<core::JsonArray>(gpus->data))
        positions.push_back(std::get<std::string>(g.data));
      if (!positions.empty())
        request.env["CUDA_VISIBLE_DEVICES"] =
            visible_devices_for(positions, env_or_empty("CUDA_VISIBLE_DEVICES"));
    }
    request.stdout_path = text(body, "stdout");
    request.stderr_path = text(body, "stderr");
    try {
      children_.insert_or_assign(key, ChildProcess::spawn(request));
    } catch (const Error& e) {
      send(MessageType::Exited, "{\"key\": " + core::json_quote(key) +
                                    ", \"code\": 127, \"signal\": 0, \"signaled\": false, "
                                    "\"error\": " +
                                    core::json_quote(e.what()) + "}");
    }
  }

  void on_signal(int fd) {
    signalfd_siginfo info{};
    bool terminate = false;
    while (::read(fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
      terminate = terminate || info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT;
    if (terminate)
      for (const auto& [key, child] : children_)
        child.signal_group(SIGTERM);
    for (auto it = children_.begin(); it != children_.end();) {
      if (const auto& status = it->second.poll()) {
        send(MessageType::Exited,
             "{\"key\": " + core::json_quote(it->first) + ", \"code\": " +
                 std::to_string(status->code) + ", \"signal\": " + std::to_string(status->signal) +
                 ", \"signaled\": " + (status->signaled ? "true" : "false") + "}");
        it = children_.erase(it);
      } else {
        ++it;
      }
    }
  }

  UniqueFd fd_;
  std::string node_;
  FrameDecoder decoder_;
  std::map<std::string, ChildProcess> children_;  // by "trial.attempt"
  bool closed_ = false, lost_ = false;
};

}  // namespace

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
        throw ProtocolError("GPU " + position + " asked of a worker that has " +
                            std::to_string(mine.size()) + " (CUDA_VISIBLE_DEVICES='" +
                            worker_visible + "')");
      device = mine[index];
    }
    if (!out.empty()) out += ',';
    out += device;
  }
  return out;
}

int run_worker(const WorkerOptions& options) {
  try {
    return Worker(options).run();
  } catch (const Error& e) {
    log_line("worker " + options.node + ": " + e.what());
    return 1;
  }
}

}  // namespace slurmtune::runtime
