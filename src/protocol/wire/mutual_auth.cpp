#include "protocol/wire/mutual_auth.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <climits>

#include "core/error.hpp"
#include "protocol/wire/openssl_error.hpp"

namespace slurmtune::protocol {
namespace {

const unsigned char* bytes(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

}  // namespace

Sha256Digest sha256(std::string_view data) {
  Sha256Digest out{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != out.size())
    throw Error(openssl_error("SHA-256 (OpenSSL EVP_Digest)"));
  return out;
}

Sha256Digest hmac_sha256(std::string_view key, std::string_view message) {
  Sha256Digest out{};
  unsigned int length = 0;
  // HMAC() takes an int key length; a token is 64 bytes, so only a caller's mistake
  // could exceed it.
  if (key.size() > static_cast<std::size_t>(INT_MAX))
    throw Error("HMAC-SHA-256: a key of " + std::to_string(key.size()) + " bytes is too long");
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes(message), message.size(),
           out.data(), &length) == nullptr ||
      length != out.size())
    throw Error(openssl_error("HMAC-SHA-256 (OpenSSL HMAC)"));
  return out;
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

std::string coordinator_proof(std::string_view token, std::string_view worker_nonce,
                              std::string_view coordinator_nonce) {
  std::string message = "slurmtune coordinator\n";
  message.append(worker_nonce).append("\n").append(coordinator_nonce);
  return to_hex(hmac_sha256(token, message));
}

std::string worker_proof(std::string_view token, std::string_view coordinator_nonce,
                         std::string_view worker_nonce) {
  std::string message = "slurmtune worker\n";
  message.append(coordinator_nonce).append("\n").append(worker_nonce);
  return to_hex(hmac_sha256(token, message));
}

}  // namespace slurmtune::protocol
