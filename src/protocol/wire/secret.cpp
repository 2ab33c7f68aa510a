#include "protocol/wire/secret.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "protocol/wire/openssl_error.hpp"

namespace slurmtune::protocol {

std::string generate_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw Error(openssl_error("drawing a random token (OpenSSL RAND_bytes)"));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xF];
  }
  return token;
}

bool tokens_equal(std::string_view a, std::string_view b) {
  // Lengths are not secret (every token has 64 digits); contents are.
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void write_token_file(const std::string& path, const std::string& token) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(path + ": cannot create the token file: " + std::strerror(errno));
  const std::string text = token + "\n";
  const ssize_t written = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()))
    throw Error(path + ": cannot write the token file: " + std::strerror(saved));
}

std::string read_token_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw InputError(path + ": cannot read the token file: " + std::strerror(errno));
  if (info.st_uid != ::geteuid())
    throw InputError(path + ": the token file belongs to another user; refusing it");
  if (info.st_mode & (S_IRWXG | S_IRWXO)) {
    std::ostringstream mode;
    mode << std::oct << (info.st_mode & 0777);
    throw InputError(path + ": the token file is readable by others (mode " + mode.str() +
                     "); run chmod 600 on it");
  }
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the token file: " + std::strerror(errno));
  std::string token;
  in >> token;
  if (token.size() != 64)
    throw InputError(path + ": not a slurmtune token (expected 64 hex digits)");
  return token;
}

}  // namespace slurmtune::protocol
