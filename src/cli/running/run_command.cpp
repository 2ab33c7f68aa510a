// slurmtune run STUDY.toml: the orchestrator. Starts the study or resumes it.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <utility>

#include "cli/options.hpp"
#include "config/study_file.hpp"
#include "core/number_text.hpp"
#include "core/placement/rendezvous.hpp"
#include "runtime/coordinator/coordinator.hpp"
#include "runtime/launch/child_process.hpp"
#include "runtime/log.hpp"
#include "runtime/recording/study_lock.hpp"
#include "runtime/study_paths.hpp"
#include "runtime/worker/node_agent.hpp"
#include "store/capacity.hpp"
#include "store/resume.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "store/warm_start.hpp"

namespace slurmtune::cli {
namespace {

std::uint16_t port_of(int port) {
  if (port < 0 || port > 65535)
    throw InputError("--port " + std::to_string(port) + " is not 0..65535");
  return static_cast<std::uint16_t>(port);
}

std::string default_output(const std::string& study_path) {
  std::filesystem::path p(study_path);
  return p.filename().replace_extension(".h5").string();
}

std::string prior_start_text(const core::MobsterOptions& o) {
  return "prior_exact = " + std::to_string(o.prior_exact) + ", prior_startup = " +
         (o.prior_startup ? std::to_string(*o.prior_startup) : std::string("every start-up")) +
         ", prior_check = " + (o.prior_check ? "true" : "false");
}

// What a new study would start with, where the defaults follow the trials run at once.
std::string fresh_prior_start_text(const core::SamplerSpec& fresh) {
  const auto& o = fresh.mobster;
  const std::string exact = fresh.prior_exact_named
                                ? std::to_string(o.prior_exact)
                                : "the larger of " + std::to_string(core::kDefaultPriorExact) +
                                      " and half the trials at once";
  const std::string startup =
      fresh.prior_startup_named ? std::to_string(o.prior_startup.value_or(0))
      : fresh.prior_exact_named ? std::to_string(core::default_prior_startup(o.prior_exact))
                                : "prior_exact + " + std::to_string(core::kPriorStartupPastExact);
  return "prior_exact = " + exact + ", prior_startup = " + startup +
         ", prior_check = " + (o.prior_check ? "true" : "false");
}

// Whether what a results file recorded for the prior's start-up is what today's defaults
// give for some number of trials at once (half of them exact): then nothing changed.
bool prior_start_of_today(const core::SamplerSpec& fresh, const core::MobsterOptions& kept) {
  auto today = fresh;
  today.prior_start_resolved = false;
  core::resolve_prior_start(today, 2 * kept.prior_exact);
  return today.mobster.prior_exact == kept.prior_exact &&
         today.mobster.prior_startup == kept.prior_startup &&
         today.mobster.prior_check == kept.prior_check;
}

// A results file written under an older default sampler resumes with the sampler it
// recorded when the study file names none.
core::StudySpec resumed_study(const core::StudySpec& study, const std::string& output) {
  const auto recorded = store::StudyReader(output).spec();
  auto resumed = store::with_recorded_defaults(study, recorded);
  if (resumed.sampler.kind != study.sampler.kind)
    std::cerr << "slurmtune run: " << study.path << " names no sampler; " << output
              << " resumes with the one it recorded, \""
              << core::sampler_keyword(resumed.sampler.kind) << "\" (a new study would get \""
              << core::sampler_keyword(study.sampler.kind) << "\")\n";
  else if (config::tpe_semantics(resumed.sampler.tpe) != config::tpe_semantics(study.sampler.tpe))
    std::cerr << "slurmtune run: " << study.path << " gives tpe no semantics; " << output
              << " resumes with the one it recorded, \""
              << config::tpe_semantics(resumed.sampler.tpe) << "\" (a new study would get \""
              << config::tpe_semantics(study.sampler.tpe) << "\")\n";
  else if (resumed.sampler.mobster.wave != study.sampler.mobster.wave)
    std::cerr << "slurmtune run: " << study.path << " gives mobster no wave; " << output
              << " was written before launch waves and resumes without them (wave = "
              << resumed.sampler.mobster.wave << "; a new study would get "
              << study.sampler.mobster.wave << ")\n";
  if (resumed.scheduler.trusted_trials != study.scheduler.trusted_trials)
    std::cerr << "slurmtune run: " << study.path << " gives asha_promotion no trusted_trials; "
              << output << " was written under an older default and resumes as it recorded "
              << "(trusted_trials = " << resumed.scheduler.trusted_trials.value_or(0)
              << "; a new study would get " << study.scheduler.trusted_trials.value_or(0)
              << ", or the prior_exact it resolves)\n";
  if (resumed.scheduler.trust_check != study.scheduler.trust_check)
    std::cerr << "slurmtune run: " << study.path << " gives asha_promotion no trust_check; "
              << output << " was written before a prior's trusted trials were checked at the "
              << "rungs and resumes as it recorded (trust_check = " << std::boolalpha
              << resumed.scheduler.trust_check << "; a new study would get "
              << study.scheduler.trust_check << ")\n";
  const auto& then = resumed.scheduler;
  const auto& now = study.scheduler;
  if (then.trust_check_waiver != now.trust_check_waiver ||
      then.trust_check_waiver_from_rung != now.trust_check_waiver_from_rung)
    std::cerr << "slurmtune run: " << study.path << " gives asha_promotion no "
              << "trust_check_waiver or trust_check_waiver_from_rung; " << output
              << " was written under an older default of a prior's trust waiver and resumes as "
              << "it recorded "
              << "(trust_check_waiver = \"" << core::trust_waiver_keyword(then.trust_check_waiver)
              << "\", trust_check_waiver_from_rung = " << then.trust_check_waiver_from_rung
              << "; a new study would get \"" << core::trust_waiver_keyword(now.trust_check_waiver)
              << "\" from rung " << now.trust_check_waiver_from_rung << ")\n";
  const auto& kept = resumed.sampler.mobster;
  if (!resumed.sampler.prior_files.empty() && !prior_start_of_today(study.sampler, kept))
    std::cerr << "slurmtune run: " << output << " was written before the prior's start-up "
              << "defaults changed and resumes with what it recorded for those of prior_exact, "
              << "prior_startup and prior_check that " << study.path << " does not name ("
              << prior_start_text(kept) << "; a new study would get "
              << fresh_prior_start_text(study.sampler) << ")\n";
  return resumed;
}

// Whether the Slurm job that holds a study's lock on another host has left the queue:
// `squeue --me` lists every job of this user that is pending or running (%A: each array
// element's own id, as its SLURM_JOB_ID); a holder's job missing from a list squeue gave
// (exit 0) has ended. No answer (no Slurm here, a controller that does not reply within
// 10 s) is no verdict.
std::string holder_job_ended(const runtime::LockHolder& holder) {
  const std::string scratch =
      (std::filesystem::temp_directory_path() / ("slurmtune-squeue-" + std::to_string(::getpid())))
          .string();
  const auto out =
      runtime::capture_output({"squeue", "--me", "--noheader", "--format=%A"}, scratch, 10);
  if (!out.text) return {};
  std::istringstream jobs(*out.text);
  std::string job;
  while (jobs >> job)
    if (job == holder.job) return {};
  return "its holder's Slurm job " + holder.job + " is no longer in the queue (squeue --me)";
}

// STUDY.trials must be the user's own, and a new study must not write into an earlier
// one's trial folders (their checkpoints would be taken for its own): STUDY.trials of
// another user, or without STUDY.h5, is refused, named.
void check_trials_folder(const std::string& output) {
  namespace fs = std::filesystem;
  const std::string trials_dir = runtime::trials_dir_of(output);
  std::error_code error;
  // Its secret, credentials and trial folders must be the user's alone.
  struct stat info {};
  if (::lstat(trials_dir.c_str(), &info) == 0 && info.st_uid != ::getuid())
    throw InputError(trials_dir + " belongs to another user (uid " + std::to_string(info.st_uid) +
                     "): a study's folders must be yours; choose another -o or remove it");
  if (fs::exists(output) || !fs::is_directory(trials_dir, error)) return;
  std::size_t folders = 0;
  for (const auto& entry : fs::directory_iterator(trials_dir, error))
    folders += entry.path().filename().string().rfind("trial-", 0) == 0;
  if (folders == 0) return;
  throw InputError(trials_dir + " holds " + std::to_string(folders) +
                   " trial folder(s) of an earlier study, but its results file " + output +
                   " is gone: a new study would write into them. To start over, remove or "
                   "rename " +
                   trials_dir + "; to resume, put the results file back");
}

}  // namespace

int run_command(const Args& args) {
  po::options_description options("run options");
  runtime::RunOptions run;
  auto& launch = run.launch;
  options.add_options()("study", po::value<std::string>()->required(), "study file (TOML)")(
      "output,o", po::value<std::string>(),
      "results file (default: STUDY.h5 in this folder); an existing one is resumed")(
      "allow-changes", "resume even if safe keys of the study file changed (max_trials, ...)")(
      "accept-joins",
      "let other jobs join the study (slurmtune join): writes the session's secret to "
      "STUDY.trials/token, which a trial could read too)")(
      "launcher", po::value<std::string>(&launch.launcher)->default_value("auto"),
      "auto | slurm | local (auto: slurm inside an allocation)")(
      "slots", po::value<std::int64_t>(&launch.slots)->default_value(0),
      "local launcher: cores to use (0: all)")(
      "mpirun", po::value<std::string>(&launch.mpirun)->default_value("mpirun"),
      "local launcher: MPI launcher for multi-rank trials")(
      "gpus", po::value<std::string>(&launch.gpus),
      "local launcher: GPUs for trials with gpus_per_task > 0, a count (4) or devices (0,2) "
      "(default: CUDA_VISIBLE_DEVICES, else the NVIDIA driver's)")(
      "trials-per-gpu", po::value<std::int64_t>(&launch.trials_per_gpu)->default_value(1),
      "local launcher: trials that may share one GPU (small models)")(
      "srun", po::value<std::string>(&launch.srun)->default_value("srun"), "slurm launcher: srun")(
      "mpi", po::value<std::string>(&launch.mpi)->default_value("auto"),
      "slurm launcher: srun --mpi type (auto: pmix for multi-rank trials, else the "
      "cluster's MpiDefault)")("srun-arg",
                               po::value<std::vector<std::string>>(&launch.srun_args)->composing(),
                               "slurm launcher: extra argument for every trial step (repeatable)")(
      "coordinator-cpus", po::value<std::int64_t>(),
      "slurm launcher: cores of the coordinator's node kept from trials (default: 1 on a node "
      "of 16 or more cores, else 0)")(
      "listen", po::value<std::string>(&run.control.listen_host)->default_value("0.0.0.0"),
      "control plane: address to listen on")("port", po::value<int>()->default_value(0),
                                             "control plane: TCP port (0: any free port)")(
      "advertise", po::value<std::string>(&run.advertise_host),
      "control plane: host name trials connect to (default: this host's name)")(
      "rendezvous-ports", po::value<std::string>(),
      "FIRST-LAST: MASTER_PORTs for trials (default: 250 ports from a base chosen by the job "
      "id)")("worker-connect-timeout",
             po::value<double>(&run.worker_connect_timeout_s)->default_value(120),
             "launch = \"worker\": seconds a worker step has to connect before its node is "
             "given up")("hello-timeout",
                         po::value<double>(&run.control.hello_timeout_s)->default_value(10),
                         "seconds a new connection has to authenticate")(
      "max-connections",
      po::value<std::size_t>(&run.control.max_authenticated)->default_value(4096),
      "control plane: authenticated connections at once (at most half the descriptor limit, "
      "which the coordinator raises to the hard limit); past it a client is told to retry")(
      "max-agent-channels",
      po::value<std::size_t>(&run.control.max_channels_per_agent)->default_value(4096),
      "launch = \"worker\": connections one node agent may carry for its node's trials")(
      "relay-fanout", po::value<std::size_t>(),
      "launch = \"worker\": node agents per relay, the relay included (0: no relays; default: "
      "64 past 1,024 nodes or past the connections the coordinator has room for)")(
      "step-launch-rate", po::value<double>(&run.step_launch_rate)->default_value(50),
      "job steps started a second at most (a step per trial, or trials of several ranks on "
      "launch = \"worker\"), so that slurmctld is not asked for thousands at once")(
      "max-step-restarts", po::value<int>(&run.max_step_restarts)->default_value(3),
      "launch = \"mpi\": relaunches of an MPI trial-group step that failed before the "
      "study gives up")("progress-interval",
                        po::value<double>(&run.progress_interval_s)->default_value(30),
                        "seconds between progress lines")(
      "stop-grace", po::value<double>(&run.stop_grace_s)->default_value(30),
      "seconds a trial told to stop has before SIGTERM")(
      "kill-grace", po::value<double>(&run.kill_grace_s)->default_value(10),
      "seconds between SIGTERM and SIGKILL")(
      "shutdown-grace", po::value<double>(&run.shutdown_grace_s)->default_value(60),
      "on SIGUSR1 (exit 75: requeue) or SIGTERM/SIGINT (exit 128+signal: cancel): seconds trials "
      "have to checkpoint before SIGTERM")(
      "flush-interval", po::value<double>(&run.flush_interval_s)->default_value(1.0),
      "seconds between flushes of the results file (what a crash can lose)")(
      "snapshot-interval", po::value<double>(&run.snapshot_interval_s)->default_value(300),
      "seconds between snapshots of the scheduler's and sampler's state in the results file, "
      "from which a resume starts instead of replaying every report; 0: none")(
      "silent-after", po::value<double>(&run.silent_after_s)->default_value(300),
      "the progress line names trials without a report or heartbeat for this long")(
      "end-margin", po::value<double>(&run.end_margin_s)->default_value(300),
      "no launch whose next rung lies past the job's end less this (the template's USR1 lead)")(
      "fail-fast", po::value<std::size_t>(&run.fail_fast)->default_value(3),
      "stop the study once this many attempts in a row failed alike (the same exit and last "
      "stderr line) before any report; 0: never")(
      "time-left", po::value<double>(),
      "seconds this session may run, instead of the Slurm job's time left");
  po::positional_options_description positional;
  positional.add("study", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune run STUDY.toml [-o STUDY.h5] [options]", options, positional,
                     vm))
    return kSuccess;
  const std::string study_path = vm["study"].as<std::string>();
  auto study = config::load_study_file(study_path);
  store::check_results_file_capacity(study);
  run.output = vm.count("output") ? vm["output"].as<std::string>() : default_output(study_path);
  // One writer per study, taken before anything of the study is touched (a second run
  // is refused naming the first; a stale lock is replaced with a line saying why).
  const runtime::StudyLock lock(runtime::lock_file_of(run.output), &runtime::log_line,
                                &holder_job_ended);
  check_trials_folder(run.output);
  if (std::filesystem::exists(run.output)) {
    // Before anything reads the file: the rows a killed session had only in its
    // write-ahead log (open_study would apply them too, after resumed_study read it).
    if (const auto applied = store::StudyWriter::apply_log(run.output)) runtime::log_line(*applied);
    study = resumed_study(study, run.output);
  }
  store::load_warm_start(study);
  run.allow_changes = vm.count("allow-changes") > 0;
  run.accept_joins = vm.count("accept-joins") > 0;
  if (vm.count("time-left")) run.time_left_s = vm["time-left"].as<double>();
  if (vm.count("rendezvous-ports"))
    run.rendezvous_ports = core::parse_port_range(vm["rendezvous-ports"].as<std::string>());
  if (!(run.worker_connect_timeout_s > 0))
    throw InputError("--worker-connect-timeout " +
                     core::format_double(run.worker_connect_timeout_s) +
                     ": give a positive number of seconds");
  if (run.control.max_authenticated == 0 || run.control.max_channels_per_agent == 0)
    throw InputError("--max-connections and --max-agent-channels: give at least 1");
  if (vm.count("relay-fanout")) {
    run.relay_fanout = vm["relay-fanout"].as<std::size_t>();
    if (*run.relay_fanout == 1 || *run.relay_fanout > runtime::NodeAgent::kMaxRelayedAgents)
      throw InputError("--relay-fanout " + std::to_string(*run.relay_fanout) +
                       ": give 0 (no relays) or 2 to " +
                       std::to_string(runtime::NodeAgent::kMaxRelayedAgents));
  }
  if (!(run.step_launch_rate > 0) || !std::isfinite(run.step_launch_rate))
    throw InputError("--step-launch-rate " + core::format_double(run.step_launch_rate) +
                     ": give a positive number of steps a second");
  if (run.max_step_restarts < 0)
    throw InputError("--max-step-restarts " + std::to_string(run.max_step_restarts) +
                     ": give 0 or more");
  if (vm.count("coordinator-cpus"))
    launch.coordinator_cpus = vm["coordinator-cpus"].as<std::int64_t>();
  run.control.port = port_of(vm["port"].as<int>());
  runtime::Coordinator coordinator(std::move(study), run);
  return coordinator.run();
}

}  // namespace slurmtune::cli
