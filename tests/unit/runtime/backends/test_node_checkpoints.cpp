// NodeCheckpoints ([checkpoints] node_local): a trial resuming from a checkpoint on a
// node's own disk runs on that node, waits (held by the controller) while that node is
// full, and goes once a slot there frees; a node lost takes its checkpoints with it, and
// its trials resume from scratch wherever there is room. A checkpoint a trial names is
// recorded as NODE:/path only inside its folder on that node.
#define BOOST_TEST_MODULE runtime_node_checkpoints
#include <boost/test/unit_test.hpp>

#include "protocol/wire/secret.hpp"
#include "runtime/backends/node_checkpoints.hpp"
#include "runtime/study_paths.hpp"
#include "unit/runtime/backends/backend_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;

namespace {

const core::StudySpec& spec() {
  static const core::StudySpec s = testing::fifo_study("local-disks", 8, R"(["true"])");
  return s;
}

// Three nodes of one slot each, named as Slurm names them.
struct ThreeNodes final : Launcher {
  ThreeNodes()
      : Launcher(core::ResourceLedger({{"n1", 1, 0}, {"n2", 1, 0}, {"n3", 1, 0}}),
                 core::SlotRequest{1, 1, 0}) {}
  std::string describe() const override { return "three nodes"; }
  std::vector<std::string> wrap(const TrialResources&,
                                const std::vector<std::string>& argv) const override {
    return argv;
  }
  std::vector<std::string> whole_step(const std::vector<std::string>& program) const override {
    return program;
  }
};

struct Fixture {
  EventLoop loop;
  testing::NoPeers peers;
  ControlServer server{loop, peers, protocol::generate_token(),
                       ControlServerOptions{"127.0.0.1", 0, 10, 16}};
  ThreeNodes launcher;
  testing::QuietController quiet{spec()};
  core::StudyController& controller = quiet.controller;
  NodeCheckpoints::Checkpoints checkpoints;
  NodeCheckpoints nodes{"/disk/{node}/ckpt", "/s/study.h5", checkpoints, launcher, server};

  // Trial `trial` ran, saved a checkpoint on `node`'s disk, and was evicted: it restarts.
  core::TrialLaunch restart_from(const std::string& node) {
    const auto first = controller.next_launch(0);
    BOOST_REQUIRE(first && first->kind == core::TrialLaunch::Kind::Start);
    checkpoints[first->trial] = {
        NodePath{node, "/disk/" + node + "/ckpt/trial-" + std::to_string(first->trial) + "/c"}
            .recorded(),
        1};
    controller.evict(first->trial);
    controller.trial_exited(first->trial, false, "its job ended");
    const auto again = controller.next_launch(0);
    BOOST_REQUIRE(again && again->trial == first->trial &&
                  again->kind == core::TrialLaunch::Kind::Restart);
    return *again;
  }
};

std::size_t index_of(const std::string& name) {
  return static_cast<std::size_t>(name.back() - '1');
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_restart_runs_on_the_node_that_holds_its_checkpoint, Fixture) {
  auto launch = restart_from("n2");
  auto elsewhere = launcher.reserve_on(index_of("n1"));
  BOOST_REQUIRE(elsewhere);
  const auto placed = nodes.place(launch, *elsewhere, controller);
  BOOST_REQUIRE(placed);
  BOOST_TEST(placed->hostlist == "n2");
  BOOST_TEST(launcher.reserve_on(index_of("n1")).has_value());  // the slot offered went back
  BOOST_TEST(nodes.trial_folder(launch.trial, index_of("n2")) ==
             "/disk/n2/ckpt/trial-" + std::to_string(launch.trial));
}

BOOST_FIXTURE_TEST_CASE(a_restart_waits_while_its_node_is_full_and_goes_when_a_slot_frees,
                        Fixture) {
  auto launch = restart_from("n2");
  const auto busy = launcher.reserve_on(index_of("n2"));  // another trial runs there
  BOOST_REQUIRE(busy);
  auto offered = launcher.reserve();
  BOOST_REQUIRE(offered);
  BOOST_TEST(!nodes.place(launch, *offered, controller).has_value());
  BOOST_TEST(!controller.is_running(launch.trial));
  // Held: the next free slot takes a new trial, not the one waiting for n2.
  const auto next = controller.next_launch(0);
  BOOST_REQUIRE(next);
  BOOST_TEST(next->trial != launch.trial);
  BOOST_TEST((next->kind == core::TrialLaunch::Kind::Start));
  // The trial on n2 ends: the waiting one comes first, and runs there.
  launcher.release(*busy);
  nodes.released(*busy, controller);
  auto resumed = controller.next_launch(0);
  BOOST_REQUIRE(resumed);
  BOOST_TEST(resumed->trial == launch.trial);
  auto free_slot = launcher.reserve();
  BOOST_REQUIRE(free_slot);
  const auto placed = nodes.place(*resumed, *free_slot, controller);
  BOOST_REQUIRE(placed);
  BOOST_TEST(placed->hostlist == "n2");
}

BOOST_FIXTURE_TEST_CASE(a_node_lost_sends_its_trials_to_start_over_anywhere, Fixture) {
  auto launch = restart_from("n3");
  const auto busy = launcher.reserve_on(index_of("n3"));
  BOOST_REQUIRE(busy);
  auto offered = launcher.reserve();
  BOOST_REQUIRE(offered);
  BOOST_TEST(!nodes.place(launch, *offered, controller).has_value());
  nodes.agent_lost("n3", controller);
  BOOST_TEST(checkpoints.at(launch.trial).path.empty());  // from scratch: no checkpoint handed
  auto again = controller.next_launch(0);
  BOOST_REQUIRE(again);
  BOOST_TEST(again->trial == launch.trial);
  auto anywhere = launcher.reserve();
  BOOST_REQUIRE(anywhere);
  const auto hostlist = anywhere->hostlist;
  const auto placed = nodes.place(*again, *anywhere, controller);
  BOOST_REQUIRE(placed);
  BOOST_TEST(placed->hostlist == hostlist);
}

BOOST_FIXTURE_TEST_CASE(a_checkpoint_on_a_node_not_in_the_job_is_not_waited_for, Fixture) {
  auto launch = restart_from("n9");  // an earlier job's node
  auto offered = launcher.reserve();
  BOOST_REQUIRE(offered);
  const auto hostlist = offered->hostlist;
  const auto placed = nodes.place(launch, *offered, controller);
  BOOST_REQUIRE(placed);
  BOOST_TEST(placed->hostlist == hostlist);
  BOOST_TEST(checkpoints.at(launch.trial).path.empty());
}

BOOST_FIXTURE_TEST_CASE(pbt_copies_wait_for_their_node_and_hear_its_answer_or_its_loss, Fixture) {
  std::vector<protocol::CheckpointCopied> heard;
  const auto hear = [&](const protocol::CheckpointCopied& c) { heard.push_back(c); };
  // A node not in the job: the copy fails at once.
  nodes.copy("n9", {0, 3, 6, {}, core::TrialId{2}}, hear);
  BOOST_REQUIRE(heard.size() == 1u);
  BOOST_TEST(heard[0].error == "its node n9 is not in this job");
  // n1 and n2 have no agent yet: both wait, each under its own id.
  nodes.copy("n1", {0, 3, 6, "/disk/n1/ckpt/trial-3/c", std::nullopt}, hear);
  nodes.copy("n2", {0, 4, 6, {}, core::TrialId{2}}, hear);
  BOOST_TEST(heard.size() == 1u);
  // n1's agent answers (the ids count from 1, the failed copy took one).
  nodes.copied("n1", {2, "/disk/n1/ckpt/trial-3/pbt-kept/step-6", 10, "10 B", {}});
  BOOST_REQUIRE(heard.size() == 2u);
  BOOST_TEST(heard[1].path == "/disk/n1/ckpt/trial-3/pbt-kept/step-6");
  // An answer nobody asked for, or from another node than the one asked: refused.
  BOOST_CHECK_THROW(nodes.copied("n1", {2, "/x", 1, {}, {}}), protocol::ProtocolError);
  BOOST_CHECK_THROW(nodes.copied("n1", {3, "/x", 1, {}, {}}), protocol::ProtocolError);
  // n2 is lost before it answered: its copy fails, saying so.
  nodes.agent_lost("n2", controller);
  BOOST_REQUIRE(heard.size() == 3u);
  BOOST_TEST(heard[2].id == 3u);
  BOOST_TEST(heard[2].error == "its node n2 was lost");
  nodes.copy("n2", {0, 4, 6, {}, core::TrialId{2}}, hear);
  BOOST_REQUIRE(heard.size() == 4u);
  BOOST_TEST(heard[3].error == "its node n2 was lost");
}

BOOST_AUTO_TEST_CASE(a_named_checkpoint_is_recorded_on_its_node_only_inside_its_folder) {
  const std::string folder = "/disk/n2/ckpt/trial-4";
  BOOST_TEST(node_local_record("/disk/n2/ckpt/trial-4/c.pt", folder, "n2").value() ==
             "n2:/disk/n2/ckpt/trial-4/c.pt");
  BOOST_TEST(node_local_record("/disk/n2/ckpt/trial-4/./sub/../c.pt", folder, "n2").value() ==
             "n2:/disk/n2/ckpt/trial-4/c.pt");
  BOOST_TEST(node_local_record("/disk/n2/ckpt/trial-4/ckpt/", folder, "n2").value() ==
             "n2:/disk/n2/ckpt/trial-4/ckpt");
  for (const char* outside :
       {"/disk/n2/ckpt/trial-4", "/disk/n2/ckpt/trial-4/", "/disk/n2/ckpt/trial-4/../trial-5/c.pt",
        "/disk/n2/ckpt/trial-40/c", "c.pt", "trial-4/c.pt", "/etc/passwd"})
    BOOST_TEST(!node_local_record(outside, folder, "n2").has_value(), outside);
}

BOOST_AUTO_TEST_CASE(node_paths_read_back_and_shared_paths_are_not_taken_for_them) {
  const NodePath written{"gpu-a17", "/local/nvme/x/trial-3/c"};
  const auto read = NodePath::parse(written.recorded());
  BOOST_REQUIRE(read);
  BOOST_TEST(read->node == "gpu-a17");
  BOOST_TEST(read->path == "/local/nvme/x/trial-3/c");
  for (const char* shared :
       {"study.trials/trial-3/c", "/scratch/me/ckpt/trial-3/c", "", "x:.trials/trial-1/c", ":/abs",
        "n1:", "n1:rel/x", "study.trials/a:/b"})
    BOOST_TEST(!NodePath::parse(shared).has_value(), shared);
  BOOST_TEST(node_folder("/local/{node}/ckpt/{node}", "n7") == "/local/n7/ckpt/n7");
  BOOST_TEST(node_folder("/local/nvme/ckpt", "n7") == "/local/nvme/ckpt");
}
