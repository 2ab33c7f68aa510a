#define BOOST_TEST_MODULE store_file_lock
// Another process holding HDF5's lock on a results file (flock(), as HDF5 takes it): a
// reader polling the file (`status --watch`, the dashboard, a user's h5py loop) holds a
// shared lock while it opens it, and a study resumed at that moment -- a requeued job --
// failed at once with "unable to lock file, errno = 11", blamed on the file system
// (CI's run.local.pbt-resume). Opens now wait for the lock, within a bound, and past
// it say who holds it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "store/file/hdf5.hpp"
#include "store/study_reader.hpp"
#include "store/study_writer.hpp"
#include "unit/store/simulated_study.hpp"
#include "unit/store/store_studies.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {

// HDF5's lock as another process takes it: flock() on a descriptor of its own (a flock
// belongs to the open file description, so this process's own opens conflict with it).
class HeldLock {
 public:
  HeldLock(const std::string& path, int how) : fd_(::open(path.c_str(), O_RDONLY)) {
    BOOST_REQUIRE(fd_ >= 0);
    BOOST_REQUIRE(::flock(fd_, how | LOCK_NB) == 0);
  }
  ~HeldLock() { ::close(fd_); }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;

  /// Lets the lock go after `ms` on a thread of its own; released() says when it has.
  void release_after(int ms) {
    releaser_ = std::jthread([this, ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      ::flock(fd_, LOCK_UN);
      released_ = true;
    });
  }
  bool released() const { return released_; }

 private:
  int fd_;
  std::atomic<bool> released_ = false;
  std::jthread releaser_;
};

std::size_t trials_in(const std::string& path) {
  return store::StudyReader(path).trials().size();
}

// A recorded study to open, and the trials it holds.
struct RecordedFile {
  testing::TempFolder dir;
  const std::string path = dir.file("s.h5");
  const std::size_t trials =
      (testing::simulate_into(path, testing::store_study(), 2), trials_in(path));
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_resume_waits_while_a_reader_holds_the_files_lock, RecordedFile) {
  HeldLock reader(path, LOCK_SH);
  reader.release_after(300);
  store::WriterOptions options;
  options.virtual_clock = true;
  auto writer = store::StudyWriter::reopen(path, testing::store_study(), options, {});
  BOOST_TEST(reader.released());  // it waited for the lock, then opened the file
  writer.reset();
  BOOST_TEST(trials_in(path) == trials);
}

BOOST_FIXTURE_TEST_CASE(a_lock_held_past_the_wait_is_named_and_the_file_is_left_as_it_was,
                        RecordedFile) {
  {
    const HeldLock reader(path, LOCK_SH);
    store::WriterOptions options;
    options.virtual_clock = true;
    options.lock_wait_s = 0.2;
    BOOST_CHECK_EXCEPTION(
        store::StudyWriter::reopen(path, testing::store_study(), options, {}), store::Hdf5Error,
        [&](const store::Hdf5Error& e) {
          const std::string text = e.what();
          BOOST_TEST_MESSAGE(text);
          return text.starts_with(path +
                                  ": another process holds HDF5's lock on the file "
                                  "(errno 11), still after 0.2 s: a program that has "
                                  "it open without SWMR") &&
                 text.find("Close that program and run again") != std::string::npos &&
                 text.find("file system refused") == std::string::npos;
        });
  }
  BOOST_TEST(trials_in(path) == trials);
}

BOOST_FIXTURE_TEST_CASE(a_reader_waits_while_a_writer_holds_the_files_lock, RecordedFile) {
  HeldLock writer(path, LOCK_EX);
  writer.release_after(300);
  BOOST_TEST(trials_in(path) == trials);
  BOOST_TEST(writer.released());
}

BOOST_AUTO_TEST_CASE(only_a_lock_taken_elsewhere_is_waited_for) {
  const std::string held =
      "H5Fopen(): unable to open file; H5FD__sec2_lock(): unable to lock file, errno = 11, "
      "error message = 'Resource temporarily unavailable'";
  const std::string refused =
      "H5FD__sec2_lock(): unable to lock file, errno = 524, error message = 'Unknown error 524'";
  BOOST_TEST(store::lock_held_elsewhere(held));
  BOOST_TEST(!store::lock_held_elsewhere(refused));
  BOOST_TEST(!store::lock_held_elsewhere("H5Fopen(): file signature not found"));
  BOOST_TEST(store::file_lock_refusal("f.h5", refused)
                 .starts_with("f.h5: the file system refused HDF5's file lock (errno 524)"));
  BOOST_TEST(store::file_lock_refusal("f.h5", "H5Fopen(): file signature not found").empty());
  // A refusal by the file system is not waited for: it would never pass.
  store::LockWait wait(10);
  BOOST_TEST(!wait.again(refused));
}
