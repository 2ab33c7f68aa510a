// The credential files a worker step writes for the attempts it starts: in a folder of
// its own (0700) on the node, each 0600 and holding what the coordinator expects of that
// attempt under the node's credential; removed when the attempt ends, all of them with
// the worker; a folder that cannot be made is named.
#define BOOST_TEST_MODULE runtime_attempt_tokens
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "protocol/credentials.hpp"
#include "protocol/wire/secret.hpp"
#include "runtime/worker/attempt_tokens.hpp"
#include "unit/temp_folder.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
namespace fs = std::filesystem;

namespace {

unsigned mode_of(const std::string& path) {
  struct stat info {};
  BOOST_REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 0777;
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_attempt_gets_its_derived_credential_until_it_ends) {
  const slurmtune::testing::TempFolder dir{"attempt-tokens"};
  const std::string secret = protocol::generate_token();
  const std::string node_credential = protocol::worker_credential(secret, "n7");
  std::string folder;
  {
    const AttemptTokens tokens(dir.path().string());
    folder = tokens.folder();
    BOOST_TEST(fs::path(folder).parent_path() == dir.path());
    BOOST_TEST(mode_of(folder) == 0700U);
    const protocol::ProcessKey key{12, 1};
    const std::string credential = protocol::attempt_credential(node_credential, 12, 1, 9);
    const std::string path = tokens.write(key, credential);
    BOOST_TEST(mode_of(path) == 0600U);
    BOOST_TEST(protocol::read_token_file(path) == credential);
    // What the coordinator expects of a HELLO of attempt 1 of trial 12, launch 9 on n7.
    BOOST_TEST(credential == protocol::credential_for(secret, protocol::TrialHello{12, 1, 0, ""},
                                                      protocol::AttemptGrant{9, "n7"}));
    // ... and not under another node's credential, nor under the secret itself.
    BOOST_TEST(credential != protocol::credential_for(secret, protocol::TrialHello{12, 1, 0, ""},
                                                      protocol::AttemptGrant{9, "n8"}));
    BOOST_TEST(credential != protocol::credential_for(secret, protocol::TrialHello{12, 1, 0, ""},
                                                      protocol::AttemptGrant{9, ""}));
    // A second launch of the same attempt writes it anew.
    const std::string again = protocol::attempt_credential(node_credential, 12, 1, 10);
    BOOST_TEST(tokens.write(key, again) == path);
    BOOST_TEST(protocol::read_token_file(path) == again);
    tokens.write({13, 0}, credential);
    tokens.remove(key);
    BOOST_TEST(!fs::exists(path));
    tokens.remove(key);  // gone already: nothing happens
  }
  BOOST_TEST(!fs::exists(folder));  // with the worker, the rest
}

BOOST_AUTO_TEST_CASE(a_folder_that_cannot_be_made_is_named) {
  const std::string missing = "/nonexistent-slurmtune-base/tmp";
  try {
    const AttemptTokens tokens(missing);
    BOOST_FAIL("made a folder in " + missing);
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find(missing) != std::string::npos, e.what());
  }
}
