// Work off the coordinator's loop: tasks run on one helper thread, first in, first out,
// with every signal blocked, and their finishes run on the loop in the order posted,
// when the loop's eventfd says so; an exception of a task is rethrown there.
#define BOOST_TEST_MODULE runtime_background_work
#include <pthread.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/control/background_work.hpp"
#include "runtime/control/event_loop.hpp"

using namespace slurmtune::runtime;

namespace {

// Turns the loop until `done` or 20 s of turns have passed (a bound, not a timing check).
template <typename Done>
void turn_until(EventLoop& loop, Done done) {
  for (int turn = 0; turn < 200 && !done(); ++turn)
    loop.run_once(100);
}

}  // namespace

BOOST_AUTO_TEST_CASE(finishes_run_on_the_loop_in_the_order_posted) {
  EventLoop loop;
  BackgroundWork work(loop);
  const auto loop_thread = std::this_thread::get_id();
  std::vector<int> order;
  std::vector<bool> on_loop;
  std::vector<bool> on_helper;
  for (int i = 0; i < 5; ++i)
    work.post([&, i, loop_thread]() -> BackgroundWork::Finish {
      const bool helper = std::this_thread::get_id() != loop_thread;
      return [&, i, helper, loop_thread] {
        order.push_back(i);
        on_helper.push_back(helper);
        on_loop.push_back(std::this_thread::get_id() == loop_thread);
      };
    });
  BOOST_TEST(work.in_flight() == 5U);
  turn_until(loop, [&] { return order.size() == 5; });
  BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}), boost::test_tools::per_element());
  for (std::size_t i = 0; i < order.size(); ++i) {
    BOOST_TEST(on_helper[i]);
    BOOST_TEST(on_loop[i]);
  }
  BOOST_TEST(work.in_flight() == 0U);
}

// At a rung crossing thousands of finishes are ready at once: the loop runs them for
// its budget a turn (at least one) and the rest in later turns, still in order.
BOOST_AUTO_TEST_CASE(finishes_past_the_budget_wait_for_the_next_turn) {
  EventLoop loop;
  BackgroundWork work(loop, std::chrono::steady_clock::duration::zero());
  std::atomic<int> made{0};
  std::vector<int> order;
  for (int i = 0; i < 4; ++i)
    work.post([&, i]() -> BackgroundWork::Finish {
      ++made;
      return [&, i] { order.push_back(i); };
    });
  for (int wait = 0; wait < 2000 && made < 4; ++wait)  // a bound, not a timing check
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_REQUIRE(made == 4);
  for (std::size_t turn = 1; turn <= 4; ++turn) {
    loop.run_once(100);
    BOOST_TEST(order.size() == turn);
    BOOST_TEST(work.in_flight() == 4 - turn);
  }
  BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3}), boost::test_tools::per_element());
  // Nothing is left: the loop is not woken for nothing.
  BOOST_TEST(loop.run_once(0) == 0);
}

BOOST_AUTO_TEST_CASE(the_helper_thread_takes_no_signal) {
  EventLoop loop;
  BackgroundWork work(loop);
  bool child_blocked = false, term_blocked = false;
  work.post([&]() -> BackgroundWork::Finish {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    const bool child = sigismember(&mask, SIGCHLD) == 1;
    const bool term = sigismember(&mask, SIGTERM) == 1;
    return [&, child, term] {
      child_blocked = child;
      term_blocked = term;
    };
  });
  work.drain();
  BOOST_TEST(child_blocked);
  BOOST_TEST(term_blocked);
}

BOOST_AUTO_TEST_CASE(a_tasks_exception_is_thrown_by_its_finish_and_the_rest_still_run) {
  EventLoop loop;
  BackgroundWork work(loop);
  std::vector<std::string> seen;
  work.post([]() -> BackgroundWork::Finish { throw std::runtime_error("disk full"); });
  work.post([&]() -> BackgroundWork::Finish { return [&] { seen.emplace_back("second"); }; });
  work.post([]() -> BackgroundWork::Finish { return {}; });  // nothing left to do
  std::string error;
  try {
    work.drain();
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  BOOST_TEST(error == "disk full");
  work.drain();
  BOOST_TEST(seen == (std::vector<std::string>{"second"}), boost::test_tools::per_element());
  BOOST_TEST(work.in_flight() == 0U);
}

BOOST_AUTO_TEST_CASE(drain_waits_for_what_finishes_post) {
  EventLoop loop;
  BackgroundWork work(loop);
  std::vector<int> order;
  work.post([&]() -> BackgroundWork::Finish {
    return [&] {
      order.push_back(1);
      work.post([&]() -> BackgroundWork::Finish { return [&] { order.push_back(2); }; });
    };
  });
  work.drain();
  BOOST_TEST(order == (std::vector<int>{1, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(destruction_finishes_the_tasks_posted) {
  EventLoop loop;
  int ran = 0;
  {
    BackgroundWork work(loop);
    for (int i = 0; i < 3; ++i)
      work.post([&ran]() -> BackgroundWork::Finish {
        ++ran;  // only the helper thread touches it until the join
        return {};
      });
  }
  BOOST_TEST(ran == 3);
}
