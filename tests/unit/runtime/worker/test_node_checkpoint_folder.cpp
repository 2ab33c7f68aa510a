// The worker's side of [checkpoints] node_local: it claims its node's folder for one
// study, makes a trial's folder there only directly inside it, and removes only what still
// lies inside that trial's folder once links are resolved on the node, off its loop; PBT's
// copies (a keep, a clone) read and write only inside the trials' folders there.
#define BOOST_TEST_MODULE runtime_node_checkpoint_folder
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "core/error.hpp"
#include "protocol/wire/protocol.hpp"
#include "runtime/worker/node_checkpoint_folder.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "weights";
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_folder_is_claimed_for_one_study_with_the_node_named_in_it) {
  testing::TempFolder disk("slurmtune-node-disk");
  const NodeCheckpointFolder folder((disk.path() / "{node}" / "ckpt").string(), "n4",
                                    "/s/study.h5");
  BOOST_TEST(folder.root() == (disk.path() / "n4" / "ckpt").string());
  struct stat info {};
  BOOST_REQUIRE(::stat(folder.root().c_str(), &info) == 0);
  BOOST_TEST((info.st_mode & 0777) == 0700u);
  // The same study again (a requeued job on the node) is welcome; another is not.
  BOOST_CHECK_NO_THROW(
      NodeCheckpointFolder((disk.path() / "{node}/ckpt").string(), "n4", "/s/study.h5"));
  try {
    NodeCheckpointFolder((disk.path() / "n4/ckpt").string(), "n4", "/s/other.h5");
    BOOST_FAIL("another study took the folder");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("holds the checkpoints of the study /s/study.h5") !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_trial_folder_is_made_only_directly_inside_the_node_folder) {
  testing::TempFolder disk("slurmtune-node-disk");
  const NodeCheckpointFolder folder(disk.file("ckpt"), "n1", "/s/study.h5");
  const std::string trial = folder.root() + "/trial-3";
  folder.make_trial_folder(trial);
  folder.make_trial_folder(trial);  // a later attempt finds it made
  struct stat info {};
  BOOST_REQUIRE(::stat(trial.c_str(), &info) == 0);
  BOOST_TEST((info.st_mode & 0777) == 0700u);
  for (const std::string& wrong :
       {disk.file("trial-3"), folder.root() + "/trial-3/sub", folder.root() + "/notes"})
    BOOST_CHECK_THROW(folder.make_trial_folder(wrong), protocol::ProtocolError);
}

BOOST_AUTO_TEST_CASE(removals_stay_inside_the_trial_folder_once_links_are_resolved) {
  testing::TempFolder disk("slurmtune-node-disk");
  const NodeCheckpointFolder folder(disk.file("ckpt"), "n1", "/s/study.h5");
  const fs::path root(folder.root());
  write(root / "trial-3" / "c-1.pt");
  write(root / "trial-3" / "dir" / "shard-0");
  write(root / "trial-4" / "c-1.pt");
  write(disk.path() / "elsewhere" / "precious");
  fs::create_directory_symlink(disk.path() / "elsewhere", root / "trial-3" / "link");
  EventLoop loop;
  {
    BackgroundWork files(loop);
    folder.remove(
        protocol::Remove{
            3,
            {(root / "trial-3/c-1.pt").string(), (root / "trial-3/dir").string(),
             (root / "trial-3/link/precious").string(), (root / "trial-4/c-1.pt").string(),
             (root / "trial-3/gone-already").string()}},
        files);
    files.drain();
  }
  BOOST_TEST(!fs::exists(root / "trial-3" / "c-1.pt"));
  BOOST_TEST(!fs::exists(root / "trial-3" / "dir"));
  BOOST_TEST(fs::exists(disk.path() / "elsewhere" / "precious"));  // behind a link: left alone
  BOOST_TEST(fs::exists(root / "trial-4" / "c-1.pt"));             // another trial's
}

namespace {

// The COPIED a copy gets, once the helper thread made it.
protocol::CheckpointCopied copied_by(const NodeCheckpointFolder& folder,
                                     const protocol::CopyCheckpoint& message) {
  EventLoop loop;
  std::optional<protocol::CheckpointCopied> reply;
  {
    BackgroundWork files(loop);
    folder.copy(message, files, [&](const protocol::CheckpointCopied& c) { reply = c; });
    files.drain();
  }
  BOOST_REQUIRE(reply);
  BOOST_TEST(reply->id == message.id);
  return *reply;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(pbt_keeps_and_clones_on_the_node_inside_the_trials_folders) {
  testing::TempFolder disk("slurmtune-node-disk");
  const NodeCheckpointFolder folder(disk.file("ckpt"), "n1", "/s/study.h5");
  const fs::path root(folder.root());
  write(root / "trial-2" / "c.pt");
  const auto kept = copied_by(folder, {1, 2, 6, (root / "trial-2/c.pt").string(), std::nullopt});
  BOOST_TEST(kept.error == "");
  BOOST_TEST(kept.path == (root / "trial-2/pbt-kept/step-6.0").string());
  BOOST_TEST(contents(root / "trial-2/pbt-kept/step-6.0/c.pt") == "weights");
  BOOST_TEST(kept.bytes == 7u);
  // A resume's keep only if missing: the agent finds it there and says so.
  protocol::CopyCheckpoint again{9, 2, 6, (root / "trial-2/c.pt").string(), std::nullopt};
  again.if_missing = true;
  const auto found = copied_by(folder, again);
  BOOST_TEST(found.error == "");
  BOOST_TEST(found.path == kept.path);
  BOOST_TEST(found.how == std::string(protocol::kKeptAlready));
  BOOST_TEST(found.bytes == 0u);
  // Trial 5 exploits trial 2: its own folder there is made (0700) for the clone.
  const auto clone = copied_by(folder, {2, 5, 6, {}, core::TrialId{2}});
  BOOST_TEST(clone.error == "");
  BOOST_TEST(clone.path == (root / "trial-5/pbt-from-trial-2-step-6.0/c.pt").string());
  BOOST_TEST(contents(clone.path) == "weights");
  struct stat info {};
  BOOST_REQUIRE(::stat((root / "trial-5").c_str(), &info) == 0);
  BOOST_TEST((info.st_mode & 0777) == 0700u);
  // No kept copy at that step: the error says so, and nothing is made.
  const auto none = copied_by(folder, {3, 5, 9, {}, core::TrialId{2}});
  BOOST_TEST(none.path == "");
  BOOST_TEST(none.error.find("trial 2 has no kept checkpoint at step 9") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(pbt_copies_refuse_what_links_take_out_of_the_trials_folder) {
  testing::TempFolder disk("slurmtune-node-disk");
  const NodeCheckpointFolder folder(disk.file("ckpt"), "n1", "/s/study.h5");
  const fs::path root(folder.root());
  write(disk.path() / "elsewhere" / "precious");
  write(root / "trial-4" / "c.pt");
  fs::create_directory_symlink(disk.path() / "elsewhere", root / "trial-2");
  fs::create_directory_symlink(disk.path() / "elsewhere", root / "trial-4" / "link");
  // Another trial's checkpoint, one behind a link, and a donor folder that is a link.
  const auto theirs = copied_by(folder, {1, 3, 1, (root / "trial-4/c.pt").string(), std::nullopt});
  BOOST_TEST(theirs.error.find("outside") != std::string::npos);
  const auto linked =
      copied_by(folder, {2, 4, 1, (root / "trial-4/link/precious").string(), std::nullopt});
  BOOST_TEST(linked.error.find("outside") != std::string::npos);
  const auto donor = copied_by(folder, {3, 4, 1, {}, core::TrialId{2}});
  BOOST_TEST(donor.error.find("does not resolve to a folder in") != std::string::npos);
  BOOST_TEST(!fs::exists(root / "trial-4" / "pbt-kept"));
  BOOST_TEST(!fs::exists(disk.path() / "elsewhere" / "pbt-kept"));
}

BOOST_AUTO_TEST_CASE(a_clone_for_another_node_is_staged_in_the_trials_shared_folder) {
  testing::TempFolder disk("slurmtune-node-disk");
  const std::string study = disk.file("shared/study.h5");
  fs::create_directories(disk.path() / "shared" / "study.trials");
  // Two nodes' disks; trial 2 (the donor) ran on n1, trial 5 runs on n2.
  const NodeCheckpointFolder n1(disk.file("{node}/ckpt"), "n1", study);
  const NodeCheckpointFolder n2(disk.file("{node}/ckpt"), "n2", study);
  write(fs::path(n1.root()) / "trial-2" / "c.pt");
  using Clone = protocol::CopyCheckpoint::Clone;
  BOOST_TEST(copied_by(n1, {1, 2, 6, n1.root() + "/trial-2/c.pt", std::nullopt}).error == "");
  const auto staged = copied_by(n1, {2, 5, 6, {}, core::TrialId{2}, Clone::Stage});
  BOOST_TEST(staged.error == "");
  const fs::path shared = disk.path() / "shared/study.trials/trial-5/pbt-from-trial-2-step-6.0";
  BOOST_TEST(fs::weakly_canonical(staged.path) == fs::weakly_canonical(shared / "c.pt"));
  BOOST_TEST(!fs::exists(fs::path(n1.root()) / "trial-5"));  // nothing of trial 5's on n1
  const auto clone = copied_by(n2, {3, 5, 6, {}, core::TrialId{2}, Clone::Staged});
  BOOST_TEST(clone.error == "");
  BOOST_TEST(clone.path == n2.root() + "/trial-5/pbt-from-trial-2-step-6.0/c.pt");
  BOOST_TEST(contents(clone.path) == "weights");
  BOOST_TEST(!fs::exists(shared));  // the staged copy went once it arrived
  // Nothing staged (the first hop failed or was never made): the second says so.
  const auto none = copied_by(n2, {4, 5, 9, {}, core::TrialId{2}, Clone::Staged});
  BOOST_TEST(none.error.find("trial 2 has no kept checkpoint at step 9") != std::string::npos);
}
