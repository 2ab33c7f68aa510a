// PBT's checkpoint copies in `slurmtune run`: copy_tree copies files byte for byte with
// their permission bits, folders, and links as links; it refuses a target that exists
// and anything but files, folders and links. PbtCheckpoints keeps a trial's checkpoint
// (its older kept copies go) and clones a donor's kept one into the exploiting trial's
// folder, whole or not at all; stamp_tree tells when a checkpoint was written meanwhile.
#define BOOST_TEST_MODULE runtime_pbt_checkpoints
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "runtime/pbt/file_copy.hpp"
#include "runtime/pbt/pbt_checkpoints.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "pbt-copy-XXXXXX").string();
    BOOST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_tree_is_copied_with_its_links_as_links_and_its_modes) {
  TempDir dir;
  const fs::path source = dir.path / "ckpt";
  const std::string big(3 << 20, 'w');  // past the read-write buffer
  write(source / "weights.bin", big);
  write(source / "nested" / "optimizer.json", "{\"lr\": 0.1}");
  fs::permissions(source / "nested" / "optimizer.json", fs::perms::owner_read);
  fs::create_symlink("/etc/passwd", source / "outside");  // never followed
  const TreeCopy copy = copy_tree(source, dir.path / "copy");
  BOOST_TEST(read(dir.path / "copy" / "weights.bin") == big);
  BOOST_TEST(read(dir.path / "copy" / "nested" / "optimizer.json") == "{\"lr\": 0.1}");
  BOOST_TEST(fs::is_symlink(dir.path / "copy" / "outside"));
  BOOST_TEST(fs::read_symlink(dir.path / "copy" / "outside") == "/etc/passwd");
  BOOST_TEST((fs::status(dir.path / "copy" / "nested" / "optimizer.json").permissions() ==
              fs::perms::owner_read));
  BOOST_TEST(copy.bytes == big.size() + 11);
  BOOST_TEST(copy.reflinked + copy.kernel_copied + copy.read_written == 2U);
}

BOOST_AUTO_TEST_CASE(an_existing_target_and_a_fifo_are_refused_by_name) {
  TempDir dir;
  write(dir.path / "a.bin", "a");
  write(dir.path / "b.bin", "b");
  try {
    copy_tree(dir.path / "a.bin", dir.path / "b.bin");
    BOOST_FAIL("an existing target was overwritten");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("b.bin") != std::string::npos);
  }
  BOOST_TEST(read(dir.path / "b.bin") == "b");
  BOOST_REQUIRE(::mkfifo((dir.path / "pipe").c_str(), 0600) == 0);
  try {
    copy_tree(dir.path / "pipe", dir.path / "pipe-copy");
    BOOST_FAIL("a fifo was copied");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("not a file, a folder or a link") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_stamp_changes_when_a_file_is_written) {
  TempDir dir;
  write(dir.path / "ckpt" / "w.bin", "1234");
  const TreeStamp before = stamp_tree(dir.path / "ckpt");
  BOOST_TEST(before.size() == 1U);
  BOOST_TEST((stamp_tree(dir.path / "ckpt") == before));
  write(dir.path / "ckpt" / "w.bin", "12345");
  BOOST_TEST((stamp_tree(dir.path / "ckpt") != before));
  const TreeStamp file = stamp_tree(dir.path / "ckpt" / "w.bin");
  BOOST_TEST(file.size() == 1U);
  BOOST_TEST(file.begin()->second.first == 5U);
}

BOOST_AUTO_TEST_CASE(keep_replaces_the_older_copy_and_clone_copies_the_donors) {
  TempDir dir;
  const fs::path trials = dir.path / "study.trials";
  const PbtCheckpoints checkpoints(dir.path, TrialFolders{trials.string(), {}});
  write(trials / "trial-1" / "ckpt.npz", "step 4");
  checkpoints.keep(1, 4, trials / "trial-1" / "ckpt.npz");
  write(trials / "trial-1" / "ckpt.npz", "step 8");
  const TreeCopy kept = checkpoints.keep(1, 8, trials / "trial-1" / "ckpt.npz");
  BOOST_TEST(kept.bytes == 6U);
  BOOST_TEST(!fs::exists(trials / "trial-1" / "pbt-kept" / "step-4.0"));
  BOOST_TEST(read(trials / "trial-1" / "pbt-kept" / "step-8.0" / "ckpt.npz") == "step 8");

  core::Exploit exploit;
  exploit.donor = 1;
  exploit.donor_step = 8;
  const PbtCheckpoints::Copy copy = checkpoints.clone(2, exploit);
  BOOST_TEST(copy.relative == "study.trials/trial-2/pbt-from-trial-1-step-8.0/ckpt.npz");
  BOOST_TEST(copy.how.bytes == 6U);
  BOOST_TEST(read(dir.path / copy.relative) == "step 8");
  // Nothing half made is left beside it.
  for (const auto& entry : fs::directory_iterator(trials / "trial-2"))
    BOOST_TEST(entry.path().filename().string().find(".partial") == std::string::npos);
  exploit.donor_step = 4;  // no longer kept
  BOOST_CHECK_THROW(checkpoints.clone(2, exploit), Error);
  BOOST_TEST(read(dir.path / copy.relative) == "step 8");  // the older clone stays
}

// A resume keeps again a checkpoint whose copy the last session may not have finished:
// only where the kept copy is not there (one that is there was renamed into place whole).
BOOST_AUTO_TEST_CASE(keep_if_missing_keeps_only_what_is_not_kept_yet) {
  TempDir dir;
  const fs::path trials = dir.path / "study.trials";
  const PbtCheckpoints checkpoints(dir.path, TrialFolders{trials.string(), {}});
  write(trials / "trial-1" / "ckpt.npz", "step 4");
  const auto made = checkpoints.keep_if_missing(1, 4, trials / "trial-1" / "ckpt.npz");
  BOOST_REQUIRE(made.has_value());
  BOOST_TEST(made->bytes == 6U);
  write(trials / "trial-1" / "ckpt.npz", "later");
  BOOST_TEST(!checkpoints.keep_if_missing(1, 4, trials / "trial-1" / "ckpt.npz").has_value());
  BOOST_TEST(read(trials / "trial-1" / "pbt-kept" / "step-4.0" / "ckpt.npz") == "step 4");
  // A half-made copy (the last session died in it) is no kept copy: made again.
  fs::remove_all(trials / "trial-1" / "pbt-kept");
  fs::create_directories(trials / "trial-1" / "pbt-kept" / "step-4.0.partial");
  BOOST_TEST(checkpoints.keep_if_missing(1, 4, trials / "trial-1" / "ckpt.npz").has_value());
  BOOST_TEST(read(trials / "trial-1" / "pbt-kept" / "step-4.0" / "ckpt.npz") == "later");
  BOOST_TEST(!fs::exists(trials / "trial-1" / "pbt-kept" / "step-4.0.partial"));
}

// With [checkpoints] folder, the kept copies and the clones go there, recorded whole.
BOOST_AUTO_TEST_CASE(copies_go_to_the_checkpoint_folder_when_there_is_one) {
  TempDir dir;
  TempDir scratch;
  const fs::path trials = dir.path / "study.trials";
  const PbtCheckpoints checkpoints(dir.path, TrialFolders{trials.string(), scratch.path.string()});
  write(scratch.path / "trial-1" / "ckpt.npz", "step 4");
  checkpoints.keep(1, 4, scratch.path / "trial-1" / "ckpt.npz");
  BOOST_TEST(read(scratch.path / "trial-1" / "pbt-kept" / "step-4.0" / "ckpt.npz") == "step 4");
  core::Exploit exploit;
  exploit.donor = 1;
  exploit.donor_step = 4;
  const PbtCheckpoints::Copy copy = checkpoints.clone(2, exploit);
  BOOST_TEST(copy.relative ==
             (scratch.path / "trial-2" / "pbt-from-trial-1-step-4.0" / "ckpt.npz").string());
  BOOST_TEST(read(dir.path / copy.relative) == "step 4");  // the study's folder / absolute
  BOOST_TEST(!fs::exists(trials));
}
