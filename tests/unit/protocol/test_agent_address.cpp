// Where a node's agent publishes its address for the ranks of trials started as their
// own steps (protocol/agent_address.hpp): a file named by the node in hex, holding one
// line; only a unix socket's address counts, so the file cannot send a trial's
// credential anywhere but a local socket.
#define BOOST_TEST_MODULE protocol_agent_address
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <string>

#include "protocol/agent_address.hpp"
#include "runtime/worker/relay_tree.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_node_s_file_is_named_by_its_name_in_hex) {
  BOOST_TEST(protocol::node_file_name("agent-", "n1") == "agent-6e31");
  BOOST_TEST(protocol::agent_address_file("/s/agents", "../x") == "/s/agents/agent-2e2e2f78");
  BOOST_TEST(protocol::node_file_name("worker-", "") == "worker-");
}

BOOST_AUTO_TEST_CASE(only_a_published_unix_address_counts) {
  const testing::TempFolder folder;
  const std::string agents = folder.file("agents");
  BOOST_TEST(!protocol::published_agent_address(agents, "n1"));  // nothing published yet
  runtime::publish_address(protocol::agent_address_file(agents, "n1"), "unix:/tmp/a/socket");
  BOOST_TEST(protocol::published_agent_address(agents, "n1").value() == "unix:/tmp/a/socket");
  BOOST_TEST(!protocol::published_agent_address(agents, "n2"));  // another node's is its own
  for (const char* line : {"10.0.0.1:5000\n", "unix:\n", "\n", ""}) {
    write(protocol::agent_address_file(agents, "n3"), line);
    BOOST_TEST(!protocol::published_agent_address(agents, "n3"), line);
  }
}
