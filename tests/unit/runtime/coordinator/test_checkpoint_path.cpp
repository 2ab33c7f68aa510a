// A checkpoint a trial names is resolved like the file system resolves it and must lie
// inside the trial's own folder.
#define BOOST_TEST_MODULE runtime_checkpoint_path
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "protocol/wire/protocol.hpp"
#include "runtime/coordinator/checkpoint_path.hpp"

namespace fs = std::filesystem;
using namespace slurmtune;
using namespace slurmtune::runtime;

namespace {
// The coordinator's check with its folders resolved for this call alone.
CheckpointPath confine_checkpoint(const std::string& named, const fs::path& trial_dir,
                                  const fs::path& checkpoint_dir, const fs::path& study_dir) {
  return CheckpointConfinement(study_dir).confine(named, trial_dir, checkpoint_dir);
}
CheckpointPath confine_checkpoint(const std::string& named, const fs::path& trial_dir,
                                  const fs::path& study_dir) {
  return confine_checkpoint(named, trial_dir, trial_dir, study_dir);
}

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

// CheckpointConfinement resolves the folders once, from their parents, and what a
// checkpoint names below them a component at a time: the answers of resolving it all.
BOOST_FIXTURE_TEST_CASE(folders_resolved_once_give_the_answers_of_resolving_all, StudyFolder) {
  CheckpointConfinement confinement(root);
  fs::create_directories(trial / "ckpt");
  std::ofstream(trial / "ckpt" / "a.pt") << "x";
  for (const std::string& named :
       {std::string("state.h5"), std::string("ckpt/a.pt"), std::string("ckpt/b/c.pt"),
        std::string("./ckpt//a.pt"), std::string("ckpt/"), std::string("ckpt/a.pt/.."),
        (trial / "ckpt" / "a.pt").string(), (trial / "new" / "x.pt").string()}) {
    fs::path want =
        fs::weakly_canonical(fs::path(named).is_absolute() ? fs::path(named) : trial / named);
    if (want.filename().empty()) want = want.parent_path();
    BOOST_TEST(confinement.confine(named, trial, trial).resolved == want, named);
  }
}

// A trial that swaps its own folder for a link to another's, after its first
// checkpoint, is not let into the other's folder.
BOOST_FIXTURE_TEST_CASE(a_folder_swapped_for_a_link_is_refused, StudyFolder) {
  CheckpointConfinement confinement(root);
  BOOST_TEST(confinement.confine("state.h5", trial, trial).relative ==
             "study.trials/trial-4/state.h5");
  fs::rename(trial, root / "study.trials" / "trial-4-old");
  fs::create_directory_symlink(root / "study.trials" / "trial-5", trial);
  BOOST_CHECK_THROW(confinement.confine("x.pt", trial, trial), protocol::ProtocolError);
  BOOST_CHECK_THROW(confinement.confine((trial / "x.pt").string(), trial, trial),
                    protocol::ProtocolError);
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

// [checkpoints] folder: the trial's folder there is its too; recorded whole (outside the
// study's folder); another trial's, the folder's root and pbt-kept there are not.
BOOST_FIXTURE_TEST_CASE(the_trials_folder_in_the_checkpoint_folder_is_its_too, StudyFolder) {
  const fs::path scratch = root / ".." / (root.filename().string() + "-scratch");
  const fs::path mine = scratch / "trial-4";
  fs::create_directories(mine);
  fs::create_directories(scratch / "trial-5");
  const auto refused_here = [&](const std::string& named) {
    try {
      confine_checkpoint(named, trial, mine, root);
    } catch (const protocol::ProtocolError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const fs::path canonical_mine = fs::weakly_canonical(mine);
  const auto kept = confine_checkpoint((mine / "ckpt-3.pt").string(), trial, mine, root);
  BOOST_TEST(kept.relative == (canonical_mine / "ckpt-3.pt").string());  // absolute
  BOOST_TEST(fs::path(kept.relative).is_absolute());
  // Its own folder in STUDY.trials stays its as well, kept relative.
  BOOST_TEST(confine_checkpoint("state.h5", trial, mine, root).relative ==
             "study.trials/trial-4/state.h5");
  BOOST_TEST(
      refused_here((scratch / "trial-5" / "ckpt.pt").string()).find("nor its checkpoint folder") !=
      std::string::npos);
  BOOST_TEST(!refused_here(mine.string()).empty());  // the folder itself
  BOOST_TEST(!refused_here((scratch / ".slurmtune-study").string()).empty());
  BOOST_TEST(!refused_here((mine / ".." / "trial-5" / "x").string()).empty());
  BOOST_TEST(refused_here((mine / "pbt-kept" / "step-3" / "x").string())
                 .find("where slurmtune keeps copies") != std::string::npos);
  fs::create_directory_symlink(scratch / "trial-5", mine / "theirs");
  BOOST_TEST(!refused_here((mine / "theirs" / "ckpt.pt").string()).empty());
  fs::remove_all(scratch);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_folder_is_made_and_claimed_by_one_study) {
  StudyFolder folder;
  const fs::path scratch = folder.root / "scratch" / "ckpts";
  const std::string results = (folder.root / "study.h5").string();
  const std::string claimed = claim_checkpoint_folder("scratch/ckpts", folder.root, results);
  BOOST_TEST(claimed == fs::weakly_canonical(scratch).string());
  BOOST_TEST(((fs::status(scratch).permissions() & fs::perms::all) == fs::perms::owner_all));
  // Again by the same study (a resume): the same folder.
  BOOST_TEST(claim_checkpoint_folder(scratch.string(), "/elsewhere", results) == claimed);
  // By another study: refused, naming the field and the owner.
  try {
    claim_checkpoint_folder(scratch.string(), folder.root, (folder.root / "other.h5").string());
    BOOST_FAIL("another study claimed the folder");
  } catch (const InputError& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("[checkpoints] folder") != std::string::npos);
    BOOST_TEST(what.find(fs::weakly_canonical(results).string()) != std::string::npos);
  }
  // A file where the folder should be.
  std::ofstream(folder.root / "plain") << "x";
  BOOST_CHECK_THROW(claim_checkpoint_folder("plain", folder.root, results), InputError);
}
