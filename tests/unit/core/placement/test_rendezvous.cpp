#define BOOST_TEST_MODULE core_rendezvous
#include <boost/test/unit_test.hpp>
#include <set>

#include "core/error.hpp"
#include "core/placement/rendezvous.hpp"

using namespace slurmtune;
using namespace slurmtune::core;

BOOST_AUTO_TEST_CASE(ports_are_unique_per_host_and_reused_once_released) {
  RendezvousPorts ports(30000, 3);
  BOOST_TEST(*ports.acquire("n1") == 30000);
  BOOST_TEST(*ports.acquire("n1") == 30001);
  BOOST_TEST(*ports.acquire("n2") == 30000);  // another host: its own ports
  BOOST_TEST(*ports.acquire("n1") == 30002);
  BOOST_TEST(!ports.acquire("n1"));  // the range is taken there
  ports.release("n1", 30001);
  BOOST_TEST(*ports.acquire("n1") == 30001);
}

BOOST_AUTO_TEST_CASE(a_port_the_probe_finds_busy_is_skipped) {
  RendezvousPorts ports(30000, 4, [](const std::string&, int port) { return port != 30000; });
  BOOST_TEST(*ports.acquire("n1") == 30001);
}

BOOST_AUTO_TEST_CASE(a_range_outside_the_unprivileged_ports_is_refused) {
  BOOST_CHECK_THROW(RendezvousPorts(80, 10), InputError);
  BOOST_CHECK_THROW(RendezvousPorts(65530, 10), InputError);
}

BOOST_AUTO_TEST_CASE(bases_differ_by_salt_and_stay_in_range) {
  BOOST_TEST(rendezvous_base(0, 1000) == 29500);
  BOOST_TEST(rendezvous_base(1, 1000) == 30500);
  for (std::uint64_t salt = 0; salt < 200; ++salt)
    BOOST_TEST(rendezvous_base(salt, 1000) + 999 <= 65535);
}

// A MASTER_PORT among the ephemeral ports can be taken by any connection of the host
// between its assignment and the trial's bind ("Address already in use", seen in
// run.local.torch beside another suite): default windows lie outside them.
BOOST_AUTO_TEST_CASE(default_windows_avoid_the_ephemeral_ports) {
  const EphemeralPorts linux_default{32768, 60999};
  std::set<int> bases;
  for (std::uint64_t salt = 0; salt < 1000; ++salt) {
    const int base = rendezvous_base(salt, 250, linux_default);
    BOOST_TEST(base >= 29500);
    BOOST_TEST(base + 249 <= 65535);
    BOOST_TEST((base + 249 < linux_default.first || base > linux_default.last), base);
    bases.insert(base);
  }
  // 29500-32749 (13 windows) and 61000-65499 (18): studies sharing a node rarely meet.
  BOOST_TEST(bases.size() == 31U);
  BOOST_TEST(*bases.begin() == 29500);
  BOOST_TEST(bases.contains(61000));
  // A site whose ephemeral ports start low keeps the stretch above them.
  BOOST_TEST(rendezvous_base(5, 250, {1024, 40000}) >= 40001);
  // No window outside: every window from 29500, as before.
  BOOST_TEST(rendezvous_base(1, 1000, {1024, 65535}) == 30500);
}

BOOST_AUTO_TEST_CASE(port_ranges_parse_or_say_what_is_wrong) {
  BOOST_TEST((parse_port_range("29500-29599") == std::pair<int, int>{29500, 100}));
  for (const char* bad : {"29500", "a-b", "300-200", "1-2-3", ""})
    BOOST_CHECK_THROW(parse_port_range(bad), InputError);
}

BOOST_AUTO_TEST_CASE(ranks_come_from_slurm_first_then_open_mpi) {
  const auto slurm = rank_environment({{"SLURM_PROCID", "3"},
                                       {"SLURM_LOCALID", "1"},
                                       {"SLURM_NODEID", "1"},
                                       {"OMPI_COMM_WORLD_RANK", "9"}});
  BOOST_TEST(slurm.at("RANK") == "3");
  BOOST_TEST(slurm.at("LOCAL_RANK") == "1");
  BOOST_TEST(slurm.at("NODE_RANK") == "1");
  const auto ompi = rank_environment({{"OMPI_COMM_WORLD_RANK", "5"},
                                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                      {"LOCAL_WORLD_SIZE", "2"}});
  BOOST_TEST(ompi.at("RANK") == "5");
  BOOST_TEST(ompi.at("LOCAL_RANK") == "1");
  BOOST_TEST(ompi.at("NODE_RANK") == "2");
  BOOST_TEST(rank_environment({{"PATH", "/bin"}}).empty());
  BOOST_CHECK_THROW(rank_environment({{"SLURM_PROCID", "x"}}), InputError);
}
