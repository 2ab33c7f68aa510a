#define BOOST_TEST_MODULE runtime_launcher
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "protocol/wire/protocol.hpp"
#include "runtime/launch/child_process.hpp"
#include "runtime/launch/launcher.hpp"
#include "runtime/launch/local_gpus.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

namespace {

// A Slurm job's variables in this process's environment for one test, removed after it.
class SlurmJobEnvironment {
 public:
  explicit SlurmJobEnvironment(std::map<std::string, std::string> variables)
      : variables_(std::move(variables)) {
    for (const auto& [name, value] : variables_)
      ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~SlurmJobEnvironment() {
    for (const auto& [name, value] : variables_)
      ::unsetenv(name.c_str());
  }
  SlurmJobEnvironment(const SlurmJobEnvironment&) = delete;
  SlurmJobEnvironment& operator=(const SlurmJobEnvironment&) = delete;

 private:
  std::map<std::string, std::string> variables_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(the_allocation_is_read_from_slurm_variables) {
  const auto a = slurm_allocation({{"SLURM_JOB_ID", "42"},
                                   {"SLURM_JOB_NODELIST", "gpu[008-010],cpu1"},
                                   {"SLURM_JOB_CPUS_PER_NODE", "8(x3),2"},
                                   {"SLURM_GPUS_PER_NODE", "a100:4"}});
  BOOST_REQUIRE(a);
  BOOST_TEST(a->job_id == "42");
  BOOST_REQUIRE(a->nodes.size() == 4u);
  BOOST_TEST(a->nodes[0].name == "gpu008");
  BOOST_TEST(a->nodes[2].name == "gpu010");
  BOOST_TEST(a->nodes[3].cpus == 2);
  BOOST_TEST(a->nodes[1].gpus == 4);
}

BOOST_AUTO_TEST_CASE(outside_an_allocation_there_is_none) {
  BOOST_TEST(!slurm_allocation({{"HOME", "/root"}}));
}

BOOST_AUTO_TEST_CASE(inconsistent_slurm_variables_are_named) {
  try {
    slurm_allocation({{"SLURM_JOB_ID", "1"},
                      {"SLURM_JOB_NODELIST", "n[1-3]"},
                      {"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}});
    BOOST_FAIL("accepted 2 counts for 3 nodes");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("SLURM_JOB_CPUS_PER_NODE='4(x2)'") != std::string::npos);
  }
  BOOST_CHECK_THROW(slurm_allocation({{"SLURM_JOB_ID", "1"},
                                      {"SLURM_JOB_NODELIST", "n1"},
                                      {"SLURM_JOB_CPUS_PER_NODE", "4"},
                                      {"SLURM_GPUS_PER_NODE", "a100:many"}}),
                    InputError);
}

BOOST_AUTO_TEST_CASE(multi_rank_local_trials_run_under_mpirun) {
  core::ResourceSpec resources;
  resources.nodes = 2;
  resources.ntasks_per_node = 2;
  LaunchOptions options;
  options.launcher = "local";
  options.slots = 8;
  const auto launcher = make_launcher(resources, options);
  BOOST_TEST(launcher->capacity() == 2u);
  const auto placement = launcher->reserve();
  BOOST_REQUIRE(placement);
  const std::vector<std::string> expected = {"mpirun", "-np", "4", "./trial", "--x=1"};
  BOOST_TEST(launcher->wrap(*placement, {"./trial", "--x=1"}) == expected,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_local_trial_larger_than_the_slots_is_refused) {
  core::ResourceSpec resources;
  resources.ntasks_per_node = 4;
  LaunchOptions options;
  options.launcher = "local";
  options.slots = 2;
  BOOST_CHECK_THROW(make_launcher(resources, options), InputError);
  options.launcher = "slurm";
  ::unsetenv("SLURM_JOB_ID");
  BOOST_CHECK_THROW(make_launcher(resources, options), InputError);
}

BOOST_AUTO_TEST_CASE(argv_reaches_the_program_verbatim_without_a_shell) {
  const slurmtune::testing::TempFolder dir("slurmtune-test-launcher");
  const std::string out = dir.file("out.txt");
  auto child = ChildProcess::spawn(
      {{"printf", "%s|", "a b", "$(touch /tmp/slurmtune-pwned)", "x;y", "$HOME"},
       {{"SLURMTUNE_TEST", "1"}},
       "",
       out,
       ""});
  BOOST_TEST(child.wait().success());
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  BOOST_TEST(text == "a b|$(touch /tmp/slurmtune-pwned)|x;y|$HOME|");
  BOOST_TEST(!std::filesystem::exists("/tmp/slurmtune-pwned"));
}

BOOST_AUTO_TEST_CASE(exit_statuses_and_signals_are_described) {
  auto exited = ChildProcess::spawn({{"sh", "-c", "exit 3"}, {}, "", "", ""});
  BOOST_TEST(exited.wait().describe() == "exit status 3");
  auto sleeper = ChildProcess::spawn({{"sleep", "30"}, {}, "", "", ""});
  sleeper.signal_group(SIGTERM);
  const auto status = sleeper.wait();
  BOOST_TEST(status.signaled);
  BOOST_TEST(status.describe() == "killed by signal 15 (SIGTERM)");
  const ExitStatus srun_segv{139, 0, false};
  BOOST_TEST(srun_segv.describe().find("SIGSEGV") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_missing_program_is_named) {
  try {
    ChildProcess::spawn({{"no-such-program-xyz"}, {}, "", "", ""});
    BOOST_FAIL("spawned a missing program");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("'no-such-program-xyz'") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_child_is_killed_with_its_group_when_its_owner_goes) {
  pid_t pid = 0;
  {
    auto child = ChildProcess::spawn({{"sleep", "30"}, {}, "", "", ""});
    pid = child.pid();
  }
  BOOST_TEST(::kill(pid, 0) != 0);  // reaped, gone
}

BOOST_AUTO_TEST_CASE(slurm_steps_carry_the_time_limit_backstop) {
  const SlurmJobEnvironment job({{"SLURM_JOB_ID", "7"},
                                 {"SLURM_JOB_NODELIST", "n[1-2]"},
                                 {"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}});
  core::ResourceSpec resources;
  LaunchOptions options;
  options.launcher = "slurm";
  options.step_time_limit_min = 2;
  const auto launcher = make_launcher(resources, options);
  const auto placement = launcher->reserve();
  BOOST_REQUIRE(placement);
  const auto argv = launcher->wrap(*placement, {"./trial"});
  BOOST_TEST(std::count(argv.begin(), argv.end(), "--time=2") == 1);
  BOOST_TEST(argv.back() == "./trial");
  options.step_time_limit_min.reset();
  const auto unlimited = make_launcher(resources, options)->wrap(*placement, {"./trial"});
  BOOST_TEST(std::none_of(unlimited.begin(), unlimited.end(),
                          [](const std::string& a) { return a.starts_with("--time"); }));
}

namespace {

std::string visible_devices(const Launcher& launcher, const TrialResources& placement) {
  const slurmtune::testing::TempFolder dir("slurmtune-test-launcher");
  const std::string out = dir.file("devices.txt");
  TrialProcessSpec spec;
  spec.argv = {"printenv", "CUDA_VISIBLE_DEVICES"};
  spec.stdout_path = out;
  BOOST_TEST(launcher.start(placement, spec).wait().success());
  std::ifstream in(out);
  std::string line;
  std::getline(in, line);
  return line;
}

// The local launcher with 8 slots and `gpus` (run --gpus).
LaunchOptions local_with_gpus(const std::string& gpus) {
  LaunchOptions options;
  options.launcher = "local";
  options.slots = 8;
  options.gpus = gpus;
  return options;
}

}  // namespace

BOOST_AUTO_TEST_CASE(local_trials_are_packed_onto_their_own_gpus) {
  core::ResourceSpec resources;
  resources.gpus_per_task = 1;
  const LaunchOptions options = local_with_gpus("3");
  const auto launcher = make_launcher(resources, options);
  BOOST_TEST(launcher->capacity() == 3u);
  BOOST_TEST(launcher->describe().find("GPUs 0,1,2") != std::string::npos);
  std::vector<TrialResources> running;
  for (int i = 0; i < 3; ++i)
    running.push_back(*launcher->reserve());
  BOOST_TEST(!launcher->reserve());  // cores are left, GPUs are not
  BOOST_TEST(visible_devices(*launcher, running[0]) == "0");
  BOOST_TEST(visible_devices(*launcher, running[2]) == "2");
  launcher->release(running[1]);
  BOOST_TEST(visible_devices(*launcher, *launcher->reserve()) == "1");
}

BOOST_AUTO_TEST_CASE(a_multi_rank_local_trial_sees_one_gpu_per_rank) {
  core::ResourceSpec resources;
  resources.ntasks_per_node = 2;
  resources.gpus_per_task = 1;
  const LaunchOptions options = local_with_gpus("4,5,6,7");
  const auto launcher = make_launcher(resources, options);
  BOOST_TEST(launcher->capacity() == 2u);
  // (mpirun -np 2 passes CUDA_VISIBLE_DEVICES to both ranks; LOCAL_RANK picks one.)
  BOOST_TEST(launcher->reserve()->gpus == std::vector<std::string>({"4", "5"}),
             boost::test_tools::per_element());
  BOOST_TEST(launcher->reserve()->gpus == std::vector<std::string>({"6", "7"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(gpus_are_shared_only_when_asked) {
  core::ResourceSpec resources;
  resources.gpus_per_task = 1;
  LaunchOptions options = local_with_gpus("1");
  BOOST_TEST(make_launcher(resources, options)->capacity() == 1u);
  options.trials_per_gpu = 3;
  const auto shared = make_launcher(resources, options);
  BOOST_TEST(shared->capacity() == 3u);
  BOOST_TEST(visible_devices(*shared, *shared->reserve()) == "0");
  BOOST_TEST(visible_devices(*shared, *shared->reserve()) == "0");
}

BOOST_AUTO_TEST_CASE(local_gpu_trials_without_gpus_are_refused_with_the_fix) {
  core::ResourceSpec resources;
  resources.gpus_per_task = 2;
  LaunchOptions options = local_with_gpus("1");
  try {
    make_launcher(resources, options);
    BOOST_FAIL("a 2-GPU trial was accepted with 1 GPU");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("needs 2 GPU(s)") != std::string::npos);
    BOOST_TEST(std::string(e.what()).find("has 1 (--gpus 1)") != std::string::npos);
  }
  options.gpus = "0,,1";
  BOOST_CHECK_THROW(make_launcher(resources, options), InputError);
}

BOOST_AUTO_TEST_CASE(local_gpus_come_from_the_option_the_environment_or_the_driver) {
  const auto dir = std::filesystem::temp_directory_path() / "slurmtune-test-nvidia-gpus";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "0000:17:00.0");
  std::filesystem::create_directories(dir / "0000:65:00.0");
  const auto driver = find_local_gpus("", {}, dir.string());
  BOOST_TEST(driver.devices == std::vector<std::string>({"0", "1"}),
             boost::test_tools::per_element());
  BOOST_TEST(driver.source.find("NVIDIA driver") != std::string::npos);
  // CUDA_VISIBLE_DEVICES wins over the driver; CUDA stops at the first invalid entry.
  const auto visible =
      find_local_gpus("", {{"CUDA_VISIBLE_DEVICES", "2,GPU-9f,-1,3"}}, dir.string());
  BOOST_TEST(visible.devices == std::vector<std::string>({"2", "GPU-9f"}),
             boost::test_tools::per_element());
  BOOST_TEST(find_local_gpus("", {{"CUDA_VISIBLE_DEVICES", ""}}, dir.string()).devices.empty());
  // The option wins over both.
  BOOST_TEST(find_local_gpus("2", {{"CUDA_VISIBLE_DEVICES", "5"}}, dir.string()).devices ==
                 std::vector<std::string>({"0", "1"}),
             boost::test_tools::per_element());
  BOOST_TEST(find_local_gpus("", {}, (dir / "none").string()).devices.empty());
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(slurm_gpu_steps_carry_gpus_per_task_and_gpu_bind) {
  const SlurmJobEnvironment job({{"SLURM_JOB_ID", "7"},
                                 {"SLURM_JOB_NODELIST", "g[1-2]"},
                                 {"SLURM_JOB_CPUS_PER_NODE", "8(x2)"},
                                 {"SLURM_GPUS_PER_NODE", "a100:4"}});
  core::ResourceSpec resources;
  resources.ntasks_per_node = 2;
  resources.gpus_per_task = 1;
  resources.gpu_bind = "closest";
  LaunchOptions options;
  options.launcher = "slurm";
  const auto launcher = make_launcher(resources, options);
  BOOST_TEST(launcher->capacity() == 4u);
  const auto argv = launcher->wrap(*launcher->reserve(), {"./trial"});
  BOOST_TEST(std::count(argv.begin(), argv.end(), "--gpus-per-task=1") == 1);
  BOOST_TEST(std::count(argv.begin(), argv.end(), "--gpu-bind=closest") == 1);
  const auto step = launcher->whole_step({"./groups"});
  BOOST_TEST(std::count(step.begin(), step.end(), "--gpu-bind=closest") == 1);
}

BOOST_AUTO_TEST_CASE(a_core_of_a_large_coordinator_node_is_kept_from_trials) {
  const SlurmJobEnvironment job({{"SLURM_JOB_ID", "8"},
                                 {"SLURM_JOB_NODELIST", "c[1-2]"},
                                 {"SLURM_JOB_CPUS_PER_NODE", "32(x2)"},
                                 {"SLURMD_NODENAME", "c1"}});
  core::ResourceSpec resources;
  resources.cpus_per_task = 8;
  LaunchOptions options;
  options.launcher = "slurm";
  const auto launcher = make_launcher(resources, options);
  BOOST_TEST(launcher->capacity() == 7u);  // 3 on c1 (31 cores), 4 on c2
  BOOST_TEST(launcher->describe().find("1 of c1 kept for the coordinator") != std::string::npos);
  options.coordinator_cpus = 0;
  BOOST_TEST(make_launcher(resources, options)->capacity() == 8u);
  options.coordinator_cpus = 32;
  BOOST_CHECK_THROW(make_launcher(resources, options), InputError);
  // Small nodes, or a trial that needs the whole node: nothing is kept unless asked.
  options.coordinator_cpus.reset();
  resources.cpus_per_task = 32;
  BOOST_TEST(make_launcher(resources, options)->capacity() == 2u);
  ::setenv("SLURM_JOB_CPUS_PER_NODE", "4(x2)", 1);
  resources.cpus_per_task = 1;
  BOOST_TEST(make_launcher(resources, options)->capacity() == 8u);
}

BOOST_AUTO_TEST_CASE(worker_steps_hand_out_their_node_s_gpus) {
  const SlurmJobEnvironment job({{"SLURM_JOB_ID", "9"},
                                 {"SLURM_JOB_NODELIST", "g[1-2]"},
                                 {"SLURM_JOB_CPUS_PER_NODE", "8(x2)"},
                                 {"SLURM_GPUS_PER_NODE", "a100:2"}});
  core::ResourceSpec resources;
  resources.gpus_per_task = 1;
  resources.launch = core::ResourceSpec::Launch::Worker;
  LaunchOptions options;
  options.launcher = "slurm";
  const auto launcher = make_launcher(resources, options);
  BOOST_TEST(launcher->capacity() == 4u);
  // One step for both nodes, a task each holding its node's cores and GPUs.
  const auto step = launcher->worker_step({0, 1}, {"slurmtune", "worker"});
  for (const char* option : {"--gpus-per-node=2", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                             "--nodelist=g[1-2]", "--cpus-per-task=8", "--kill-on-bad-exit=0"})
    BOOST_TEST(std::count(step.begin(), step.end(), option) == 1, option);
  std::vector<TrialResources> running;
  for (int i = 0; i < 4; ++i)
    running.push_back(*launcher->reserve());
  BOOST_TEST(!launcher->reserve());
  // Two trials per node, each on its own GPU (by position in the worker's devices).
  for (const auto& p : running)
    BOOST_TEST(p.gpus.size() == 1u);
  BOOST_TEST(running[0].hostlist == running[1].hostlist);
  BOOST_TEST(running[0].gpus != running[1].gpus);
  launcher->release(running[0]);
  BOOST_TEST(launcher->reserve()->gpus == running[0].gpus, boost::test_tools::per_element());
  // A step per trial leaves the GPUs to Slurm.
  resources.launch = core::ResourceSpec::Launch::Step;
  BOOST_TEST(make_launcher(resources, options)->reserve()->gpus.empty());
}

BOOST_AUTO_TEST_CASE(trials_of_several_ranks_on_worker_launch_are_steps_beside_light_agents) {
  const SlurmJobEnvironment job({{"SLURM_JOB_ID", "9"},
                                 {"SLURM_JOB_NODELIST", "g[1-2]"},
                                 {"SLURM_JOB_CPUS_PER_NODE", "8(x2)"},
                                 {"SLURM_GPUS_PER_NODE", "a100:2"}});
  core::ResourceSpec resources;
  resources.nodes = 2;
  resources.gpus_per_task = 1;
  resources.launch = core::ResourceSpec::Launch::Worker;
  LaunchOptions options;
  options.launcher = "slurm";
  const auto launcher = make_launcher(resources, options);
  // The agents hold a core each, shared with the trials' steps, and no GPU.
  const auto step = launcher->worker_step({0, 1}, {"slurmtune", "worker"});
  for (const char* option : {"--overlap", "--cpus-per-task=1", "--ntasks-per-node=1", "--nodes=2"})
    BOOST_TEST(std::count(step.begin(), step.end(), option) == 1, option);
  BOOST_TEST(std::none_of(step.begin(), step.end(),
                          [](const std::string& a) { return a.starts_with("--gpus"); }));
  // A trial's step takes its GPUs from Slurm, not from a worker's list.
  const auto placement = launcher->reserve();
  BOOST_TEST(placement->gpus.empty());
  BOOST_TEST(placement->hostlist == "g[1-2]");
  const auto argv = launcher->wrap(*placement, {"train"});
  BOOST_TEST(std::count(argv.begin(), argv.end(), "--gpus-per-task=1") == 1);
}

BOOST_AUTO_TEST_CASE(a_worker_names_a_trial_s_gpus_as_it_sees_them) {
  BOOST_TEST(visible_devices_for({"1"}, "4,5") == "5");
  BOOST_TEST(visible_devices_for({"0", "1"}, "GPU-a,GPU-b") == "GPU-a,GPU-b");
  BOOST_TEST(visible_devices_for({"1"}, "") == "1");
  BOOST_CHECK_THROW(visible_devices_for({"2"}, "4,5"), protocol::ProtocolError);
  BOOST_CHECK_THROW(visible_devices_for({"0"}, "-1"), protocol::ProtocolError);  // it sees none
}
