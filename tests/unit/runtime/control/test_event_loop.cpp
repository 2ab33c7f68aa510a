// The coordinator's epoll loop: a turn's budget stops its callbacks, and the ready fds it
// left run first in the next turn, so connections that stay busy cannot starve the others.
#define BOOST_TEST_MODULE runtime_event_loop
#include <sys/epoll.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <vector>

#include "runtime/control/event_loop.hpp"

using namespace slurmtune::runtime;

namespace {

/// A pipe with a byte in it that no callback reads: readable at every wait.
struct ReadyPipe {
  int fds[2] = {-1, -1};
  ReadyPipe() {
    BOOST_REQUIRE(::pipe(fds) == 0);
    BOOST_REQUIRE(::write(fds[1], "x", 1) == 1);
  }
  ~ReadyPipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  ReadyPipe(const ReadyPipe&) = delete;
  ReadyPipe& operator=(const ReadyPipe&) = delete;
};

}  // namespace

BOOST_AUTO_TEST_CASE(without_a_budget_every_ready_fd_runs) {
  EventLoop loop;
  ReadyPipe a, b, c;
  int runs = 0;
  for (const ReadyPipe* p : {&a, &b, &c})
    loop.add(p->fds[0], EPOLLIN, [&](std::uint32_t) { ++runs; });
  BOOST_TEST(loop.run_once(1000) == 3);
  BOOST_TEST(runs == 3);
  BOOST_TEST(!loop.behind());  // nothing left for the next turn
}

BOOST_AUTO_TEST_CASE(a_spent_budget_leaves_the_rest_to_run_first_next_turn) {
  EventLoop loop;
  ReadyPipe a, b, c;
  std::vector<int> order;
  for (const ReadyPipe* p : {&a, &b, &c})
    loop.add(p->fds[0], EPOLLIN, [&order, fd = p->fds[0]](std::uint32_t) { order.push_back(fd); });
  // A budget of nothing: one callback a turn, however many are ready.
  for (int turn = 0; turn < 3; ++turn) {
    BOOST_TEST(loop.run_once(1000, std::chrono::steady_clock::duration::zero()) == 1);
    BOOST_TEST(loop.behind());  // ready fds were left: the launches yield to them
  }
  // All three stay readable, yet each ran once: the ones left over went first.
  BOOST_REQUIRE(order.size() == 3U);
  BOOST_TEST(order[0] != order[1]);
  BOOST_TEST(order[1] != order[2]);
  BOOST_TEST(order[0] != order[2]);
}
