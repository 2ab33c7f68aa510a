// The allocation's node names are looked up off the coordinator's loop (NodeLookups):
// what the thread found is what a lookup on the loop finds.
#define BOOST_TEST_MODULE runtime_node_lookups
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>

#include "runtime/launch/node_lookups.hpp"

using namespace slurmtune::runtime;

BOOST_AUTO_TEST_CASE(each_node_is_looked_up_once_off_the_loop) {
  const std::vector<std::string> nodes = {"localhost", "no-such-node.invalid", "127.0.0.1"};
  const NodeLookups lookups(nodes);
  BOOST_TEST(!lookups.resolves("not-in-the-allocation").has_value());
  // The thread looks them up in order: the last one found means all were (a bounded wait).
  for (int i = 0; i < 3000 && !lookups.resolves(nodes.back()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (const std::string& node : nodes) {
    BOOST_REQUIRE(lookups.resolves(node).has_value());
    BOOST_TEST(*lookups.resolves(node) == name_resolves(node), node);
  }
  BOOST_TEST(*lookups.resolves("localhost"));
  BOOST_TEST(!*lookups.resolves("no-such-node.invalid"));
}
