// The writer's flush thread: one job at a time (a second waits for the next turn, so
// HDF5 is never called from two threads at once), an explicit wait returns once the
// job is done, and a job's error reaches the caller at its next call.
#define BOOST_TEST_MODULE store_flush_thread
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <cstdint>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

#include "store/file/flush_thread.hpp"

using namespace slurmtune::store;

BOOST_AUTO_TEST_CASE(one_job_at_a_time_and_a_wait_returns_when_it_is_done) {
  FlushThread thread;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  int ran = 0;
  BOOST_TEST(thread.try_start([&] {
    released.wait();
    ++ran;
  }));
  BOOST_TEST(thread.busy());
  BOOST_TEST(!thread.try_start([&] { ran += 100; }));  // refused while the first runs
  release.set_value();
  thread.wait();
  BOOST_TEST(!thread.busy());
  BOOST_TEST(ran == 1);
  BOOST_TEST(thread.try_start([&] { ++ran; }));
  thread.wait();
  BOOST_TEST(ran == 2);
}

BOOST_AUTO_TEST_CASE(an_error_is_thrown_at_the_next_call_once) {
  FlushThread thread;
  BOOST_TEST(thread.try_start([] { throw std::runtime_error("disk full"); }));
  BOOST_CHECK_EXCEPTION(thread.wait(), std::runtime_error, [](const std::runtime_error& e) {
    return std::string(e.what()) == "disk full";
  });
  thread.wait();  // reported once: the thread goes on
  BOOST_TEST(thread.try_start([] { throw std::runtime_error("again"); }));
  while (thread.busy()) {
  }
  BOOST_CHECK_THROW(thread.try_start([] {}), std::runtime_error);  // before the next job
}

BOOST_AUTO_TEST_CASE(ending_waits_for_the_running_job) {
  bool wrote = false;
  {
    FlushThread thread;
    thread.try_start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      wrote = true;
    });
  }
  BOOST_TEST(wrote);
}

// Signals stay for the thread that reads them: the coordinator takes SIGCHLD from a
// signalfd, and a flush thread that let it in would discard it (a trial's end unseen).
BOOST_AUTO_TEST_CASE(its_thread_takes_no_signal) {
  FlushThread thread;
  sigset_t mask;
  bool blocked = false;
  thread.try_start([&] {
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    blocked = sigismember(&mask, SIGCHLD) == 1 && sigismember(&mask, SIGTERM) == 1 &&
              sigismember(&mask, SIGUSR1) == 1;
  });
  thread.wait();
  BOOST_TEST(blocked);
}

// Background work yields to the loop where they share a core: ten nice steps below the
// thread that started it (19 at most), and the starter's own priority is left alone. The
// flush thread does not: decisions wait for its commits.
BOOST_AUTO_TEST_CASE(a_background_thread_runs_below_the_loop_and_the_flush_thread_does_not) {
  const auto priority = [] { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); };
  const int loop = priority();
  int background = loop;
  std::thread thread = background_thread("st-test", [&] { background = priority(); });
  thread.join();
  BOOST_TEST(background == std::min(loop + 10, 19));
  FlushThread flush;
  int flushing = -100;
  flush.try_start([&] { flushing = priority(); });
  flush.wait();
  BOOST_TEST(flushing == loop);
  BOOST_TEST(priority() == loop);
}

// Each thread is named, so that `top -H` and a profile say whose time it is.
BOOST_AUTO_TEST_CASE(a_background_thread_has_its_name) {
  std::array<char, 16> name{};
  std::thread thread = background_thread(
      "st-test-name", [&] { pthread_getname_np(pthread_self(), name.data(), name.size()); });
  thread.join();
  BOOST_TEST(std::string(name.data()) == "st-test-name");
  FlushThread flush;
  flush.try_start([&] { pthread_getname_np(pthread_self(), name.data(), name.size()); });
  flush.wait();
  BOOST_TEST(std::string(name.data()) == "st-flush");
}

// The CPU time it reports is its own thread's, counted to its last job's end: the loop's
// time spent on its own work is not in it, and a job's is.
BOOST_AUTO_TEST_CASE(its_cpu_time_is_its_own_thread_s) {
  FlushThread flush;
  BOOST_TEST(flush.cpu_seconds() < 0.01);  // started, and waiting for a job
  const auto burn = [](double seconds) {
    const double until = this_thread_cpu_seconds() + seconds;
    volatile std::uint64_t spin = 0;
    while (this_thread_cpu_seconds() < until)
      spin = spin + 1;
  };
  double in_job = 0;
  flush.try_start([&] {
    burn(0.05);
    in_job = this_thread_cpu_seconds();
  });
  flush.wait();
  BOOST_TEST(flush.cpu_seconds() >= in_job);
  BOOST_TEST(flush.cpu_seconds() >= 0.05);
  const double before = flush.cpu_seconds();
  burn(0.1);  // on this thread: not the flush thread's
  BOOST_TEST(flush.cpu_seconds() < before + 0.01);
  BOOST_TEST(this_thread_cpu_seconds() >= 0.1);
}
