#define BOOST_TEST_MODULE runtime_launcher
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "runtime/child_process.hpp"
#include "runtime/launcher.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

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
  const auto dir = std::filesystem::temp_directory_path() / "slurmtune-test-launcher";
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out.txt").string();
  std::filesystem::remove(out);
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
  ::setenv("SLURM_JOB_ID", "7", 1);
  ::setenv("SLURM_JOB_NODELIST", "n[1-2]", 1);
  ::setenv("SLURM_JOB_CPUS_PER_NODE", "4(x2)", 1);
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
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_CPUS_PER_NODE"})
    ::unsetenv(name);
}
