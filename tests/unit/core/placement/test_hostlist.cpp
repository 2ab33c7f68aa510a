#define BOOST_TEST_MODULE core_hostlist
#include <boost/test/unit_test.hpp>

#include "core/error.hpp"
#include "core/placement/hostlist.hpp"

using namespace slurmtune::core;
using Hosts = std::vector<std::string>;

namespace {
std::string error_of(const std::string& list) {
  try {
    expand_hostlist(list);
  } catch (const slurmtune::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

BOOST_AUTO_TEST_CASE(expands_ranges_lists_and_plain_names) {
  BOOST_TEST((expand_hostlist("n[1-3,7]") == Hosts{"n1", "n2", "n3", "n7"}));
  BOOST_TEST((expand_hostlist("login") == Hosts{"login"}));
  BOOST_TEST((expand_hostlist("a1,b[2-3],c") == Hosts{"a1", "b2", "b3", "c"}));
  BOOST_TEST((expand_hostlist("") == Hosts{}));
}

BOOST_AUTO_TEST_CASE(keeps_zero_padding_and_suffixes) {
  BOOST_TEST((expand_hostlist("gpu[08-11]") == Hosts{"gpu08", "gpu09", "gpu10", "gpu11"}));
  BOOST_TEST((expand_hostlist("gpu[01-02]-ib") == Hosts{"gpu01-ib", "gpu02-ib"}));
  BOOST_TEST(
      (expand_hostlist("nid[0098-0101]") == Hosts{"nid0098", "nid0099", "nid0100", "nid0101"}));
}

BOOST_AUTO_TEST_CASE(several_bracket_groups_multiply) {
  BOOST_TEST((expand_hostlist("r[1-2]n[1-2]") == Hosts{"r1n1", "r1n2", "r2n1", "r2n2"}));
}

BOOST_AUTO_TEST_CASE(malformed_lists_name_the_column) {
  BOOST_TEST(error_of("n[1-3").find("unclosed '['") != std::string::npos);
  BOOST_TEST(error_of("n1-3]").find("at column 5: unexpected ']'") != std::string::npos);
  BOOST_TEST(error_of("n[3-1]").find("runs backwards") != std::string::npos);
  BOOST_TEST(error_of("n[a-b]").find("expected a number") != std::string::npos);
  BOOST_TEST(error_of("n1,,n2").find("empty host name") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(lists_that_would_exhaust_memory_are_refused) {
  BOOST_TEST(error_of("n[0-2000000]").find("is too large") != std::string::npos);
  BOOST_TEST(error_of("r[0-999999]n[0-999999]").find("more than 1000000 hosts") !=
             std::string::npos);
  BOOST_TEST(error_of("a[0-600000],b[0-600000]").find("more than 1000000 hosts") !=
             std::string::npos);
  BOOST_TEST(expand_hostlist("n[1-999999]").size() == 999999u);
}

BOOST_AUTO_TEST_CASE(compression_is_the_inverse_of_expansion) {
  BOOST_TEST(compress_hostlist({"n1", "n2", "n3", "n7"}) == "n[1-3,7]");
  BOOST_TEST(compress_hostlist({"gpu08", "gpu09", "gpu10", "login"}) == "gpu[08-10],login");
  BOOST_TEST(compress_hostlist({"n5"}) == "n5");
  BOOST_TEST(compress_hostlist({"n9", "n010"}) == "n9,n010");  // widths differ: not merged
  for (const std::string list : {"n[1-3,7]", "gpu[01-16],cpu[001-128]", "a,b,c[1-2]"})
    BOOST_TEST(compress_hostlist(expand_hostlist(list)) == list);
}

BOOST_AUTO_TEST_CASE(expands_slurm_per_node_counts) {
  BOOST_TEST((expand_counts("4(x2),2") == std::vector<std::int64_t>{4, 4, 2}));
  BOOST_TEST((expand_counts("36") == std::vector<std::int64_t>{36}));
  BOOST_TEST((expand_counts("1(x3)") == std::vector<std::int64_t>{1, 1, 1}));
  BOOST_CHECK_THROW(expand_counts("4(x2"), slurmtune::InputError);
  BOOST_CHECK_THROW(expand_counts("four"), slurmtune::InputError);
}
