// A checkpoint a trial names is resolved like the file system resolves it and must lie
// inside the trial's own folder.
#define BOOST_TEST_MODULE runtime_checkpoint_path
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "protocol/wire/protocol.hpp"
#include "runtime/coordinator/checkpoint_path.hpp"

namespace fs = std::filesystem;
using namespace slurmtune;
using namespace slurmtune::runtime;

namespace {
struct StudyFolder {
  StudyFolder() {
    char pattern[] = "/tmp/slurmtune-checkpoint-XXXXXX";
    root = fs::path(::mkdtemp(pattern));
    trial = root / "study.trials" / "trial-4";
    fs::create_directories(trial);
    fs::create_directories(root / "study.trials" / "trial-5");
    std::ofstream(trial / "state.h5") << "x";
  }
  ~StudyFolder() { fs::remove_all(root); }
  std::string refused(const std::string& named) {
    try {
      confine_checkpoint(named, trial, root);
    } catch (const protocol::ProtocolError& e) {
      return e.what();
    }
    return "";
  }
  fs::path root, trial;
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(paths_inside_the_trial_folder_are_kept_relative_to_the_study, StudyFolder) {
  BOOST_TEST(confine_checkpoint("state.h5", trial, root).relative ==
             "study.trials/trial-4/state.h5");
  BOOST_TEST(confine_checkpoint((trial / "state.h5").string(), trial, root).relative ==
             "study.trials/trial-4/state.h5");
  // Not written yet, and a folder of its own: both allowed.
  BOOST_TEST(confine_checkpoint("ckpt/epoch-3/", trial, root).relative ==
             "study.trials/trial-4/ckpt/epoch-3");
  BOOST_TEST(confine_checkpoint("a/../state.h5", trial, root).relative ==
             "study.trials/trial-4/state.h5");
}

BOOST_FIXTURE_TEST_CASE(dot_dot_and_absolute_paths_out_of_the_folder_are_refused, StudyFolder) {
  BOOST_TEST(refused("../trial-5/state.h5").find("not inside the trial's own folder") !=
             std::string::npos);
  BOOST_TEST(!refused("..").empty());
  BOOST_TEST(!refused(".").empty());  // the folder itself: PBT would copy it into itself
  BOOST_TEST(!refused("/etc/passwd").empty());
  BOOST_TEST(!refused((root / "study.trials").string()).empty());
  BOOST_TEST(refused("pbt-kept/step-3/state.h5").find("where slurmtune keeps copies") !=
             std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(links_are_resolved_before_the_check, StudyFolder) {
  fs::create_directory_symlink(root / "study.trials", trial / "up");
  fs::create_symlink("/etc/passwd", trial / "passwd");
  BOOST_TEST(!refused("up/trial-5").empty());
  BOOST_TEST(!refused("up/trial-4").empty());  // the folder itself, through a link
  BOOST_TEST(!refused("passwd").empty());
  fs::create_symlink(trial / "state.h5", trial / "latest.h5");
  BOOST_TEST(confine_checkpoint("latest.h5", trial, root).relative ==
             "study.trials/trial-4/state.h5");
}

BOOST_AUTO_TEST_CASE(long_paths_are_resolved_whole) {
  StudyFolder folder;
  fs::path deep = folder.trial;
  for (int i = 0; i < 6; ++i)
    deep /= std::string(60, static_cast<char>('a' + i));
  fs::create_directories(deep);
  const auto named = (deep / "state.h5").string();
  BOOST_TEST(named.size() > 300u);
  const auto kept = confine_checkpoint(named, folder.trial, folder.root);
  BOOST_TEST(kept.resolved.string() == fs::weakly_canonical(named).string());
  BOOST_TEST(kept.relative.size() > 300u);
}
