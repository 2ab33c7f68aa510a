#define BOOST_TEST_MODULE runtime_mutual_auth
#include <boost/test/unit_test.hpp>
#include <string>

#include "protocol/wire/mutual_auth.hpp"

using namespace slurmtune;

BOOST_AUTO_TEST_CASE(sha256_matches_the_fips_examples) {
  BOOST_TEST(protocol::to_hex(protocol::sha256("")) ==
             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(protocol::to_hex(protocol::sha256("abc")) ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_TEST(protocol::to_hex(
                 protocol::sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  BOOST_TEST(protocol::to_hex(protocol::sha256(std::string(1000000, 'a'))) ==
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every padding case (a tail of 0..63 bytes, one or two final blocks): the digests of
// "a" * n for n = 0..200, hex-joined and hashed, against Python's hashlib.
BOOST_AUTO_TEST_CASE(sha256_pads_every_length) {
  std::string joined;
  for (int n = 0; n <= 200; ++n)
    joined += protocol::to_hex(protocol::sha256(std::string(static_cast<std::size_t>(n), 'a')));
  BOOST_TEST(protocol::to_hex(protocol::sha256(joined)) ==
             "eb555248bd20c7831e511d4461b42c9b084e3a64b44d57b00051172f8afe03ff");
}

BOOST_AUTO_TEST_CASE(hmac_matches_rfc_4231) {
  // Test cases 1, 2 and 6 (a key longer than the block is hashed first).
  BOOST_TEST(protocol::to_hex(protocol::hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  BOOST_TEST(protocol::to_hex(protocol::hmac_sha256("Jefe", "what do ya want for nothing?")) ==
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  BOOST_TEST(
      protocol::to_hex(protocol::hmac_sha256(
          std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  BOOST_TEST(
      protocol::to_hex(protocol::hmac_sha256(std::string(131, 'k'), std::string(200, 'x'))) ==
      "ef7972c4104afae433fd201839d225e13f1d8401efddbfaa80f5fe829a7dbd2f");
}

BOOST_AUTO_TEST_CASE(proofs_bind_the_token_both_nonces_and_the_direction) {
  const std::string token(64, 'f'), nw = "1111", nc = "2222";
  const std::string coordinator = protocol::coordinator_proof(token, nw, nc);
  BOOST_TEST(coordinator.size() == 64U);
  BOOST_TEST(coordinator == protocol::coordinator_proof(token, nw, nc));
  BOOST_TEST(coordinator != protocol::coordinator_proof(std::string(64, 'e'), nw, nc));
  BOOST_TEST(coordinator != protocol::coordinator_proof(token, "1112", nc));
  BOOST_TEST(coordinator != protocol::coordinator_proof(token, nw, "2223"));
  // A coordinator's proof is never a worker's: it cannot be reflected back.
  BOOST_TEST(protocol::worker_proof(token, nw, nc) != protocol::coordinator_proof(token, nw, nc));
  BOOST_TEST(protocol::worker_proof(token, nc, nw) != protocol::coordinator_proof(token, nw, nc));
}
