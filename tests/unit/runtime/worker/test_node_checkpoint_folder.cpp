// The worker's side of [checkpoints] node_local: it claims its node's folder for one
// study, makes a trial's folder there only directly inside it, and removes only what still
// lies inside that trial's folder once links are resolved on the node, off its loop.
#define BOOST_TEST_MODULE runtime_node_checkpoint_folder
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

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
