// Rendezvous ports of the coordinator's own host: two coordinators (two studies, their
// port ranges the same) never hand out one port, even before any trial has bound it.
#define BOOST_TEST_MODULE runtime_rendezvous
#include <boost/test/unit_test.hpp>
#include <fstream>

#include "runtime/launch/rendezvous.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;

namespace {
core::ResourceSpec two_ranks() {
  core::ResourceSpec r;
  r.ntasks_per_node = 2;
  return r;
}
// A range no other test uses, the same for both "coordinators".
constexpr std::pair<int, int> kRange{61200, 20};
}  // namespace

BOOST_AUTO_TEST_CASE(two_studies_on_one_host_get_different_ports) {
  runtime::RendezvousAssigner first(kRange, true, "/tmp/unused"),
      second(kRange, true, "/tmp/unused");
  const runtime::TrialResources here{{0}, "localhost", {}};
  const auto a = first.assign(here, two_ranks());
  const auto b = second.assign(here, two_ranks());
  BOOST_REQUIRE(a && b);
  BOOST_TEST(a->host == "127.0.0.1");
  BOOST_TEST(a->port != b->port);  // nothing listens on a->port yet: the claim is what tells
  BOOST_TEST(a->env.at("MASTER_PORT") == std::to_string(a->port));
  // Released, the port is free for the other study again.
  first.release(*a);
  const auto c = second.assign(here, two_ranks());
  BOOST_REQUIRE(c);
  BOOST_TEST(c->port == a->port);
}

BOOST_AUTO_TEST_CASE(a_study_hands_out_each_port_once_until_it_is_released) {
  runtime::RendezvousAssigner ports({kRange.first, 2}, true, "/tmp/unused");
  const runtime::TrialResources here{{0}, "localhost", {}};
  const auto a = ports.assign(here, two_ranks()), b = ports.assign(here, two_ranks());
  BOOST_REQUIRE(a && b);
  BOOST_TEST(a->port != b->port);
  BOOST_TEST(!ports.assign(here, two_ranks()));  // both taken
  ports.release(*b);
  BOOST_TEST(ports.assign(here, two_ranks())->port == b->port);
}

BOOST_AUTO_TEST_CASE(the_ephemeral_ports_come_from_the_kernel_or_its_default) {
  const slurmtune::testing::TempFolder dir("slurmtune-ephemeral");
  std::ofstream(dir.file("range")) << "40000\t50000\n";
  const auto read = runtime::ephemeral_ports(dir.file("range"));
  BOOST_TEST(read.first == 40000);
  BOOST_TEST(read.last == 50000);
  const auto missing = runtime::ephemeral_ports(dir.file("missing"));
  BOOST_TEST(missing.first == 32768);
  BOOST_TEST(missing.last == 60999);
  std::ofstream(dir.file("garbage")) << "60999 32768\n";  // reversed: not a range
  BOOST_TEST(runtime::ephemeral_ports(dir.file("garbage")).first == 32768);
  // This machine's own range, whatever it is, gives a default range outside it.
  const auto here = runtime::ephemeral_ports();
  const auto [first, count] = runtime::default_rendezvous_ports();
  BOOST_TEST((first + count - 1 < here.first || first > here.last || here.first <= 29500));
}
