#define BOOST_TEST_MODULE runtime_secret
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "protocol/wire/secret.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_CASE(tokens_are_256_random_bits_in_hex) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const auto t = protocol::generate_token();
    BOOST_REQUIRE(t.size() == 64U);
    BOOST_REQUIRE(t.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(t);
  }
  BOOST_TEST(seen.size() == 100U);
}

BOOST_AUTO_TEST_CASE(tokens_compare_exactly) {
  const auto t = protocol::generate_token();
  BOOST_TEST(protocol::tokens_equal(t, t));
  std::string other = t;
  other.back() = other.back() == 'a' ? 'b' : 'a';
  BOOST_TEST(!protocol::tokens_equal(t, other));
  BOOST_TEST(!protocol::tokens_equal(t, t.substr(1)));
  BOOST_TEST(!protocol::tokens_equal(t, ""));
}

BOOST_AUTO_TEST_CASE(token_files_are_private_and_never_replaced) {
  const slurmtune::testing::TempFolder dir("slurmtune-secret");
  const std::string path = dir.file("token");
  const auto token = protocol::generate_token();
  protocol::write_token_file(path, token);
  struct stat info {};
  BOOST_REQUIRE(stat(path.c_str(), &info) == 0);
  BOOST_TEST((info.st_mode & 0777) == 0600U);
  BOOST_TEST(protocol::read_token_file(path) == token);
  BOOST_CHECK_THROW(protocol::write_token_file(path, protocol::generate_token()), slurmtune::Error);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  try {
    protocol::read_token_file(path);
    BOOST_ERROR("read a world-readable token file");
  } catch (const slurmtune::InputError& e) {
    BOOST_TEST(std::string(e.what()).find("readable by others (mode 444); run chmod 600") !=
               std::string::npos);
  }
}
