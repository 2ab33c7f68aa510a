#pragma once
// The study's secret token: 256 random bits that every control-plane connection must
// present before anything else. It reaches trials only through their environment and
// a file only its owner can read (0600).
#include <string>
#include <string_view>

namespace slurmtune::protocol {

/// 32 bytes from OpenSSL's CSPRNG (RAND_bytes, seeded by the kernel), as 64 lowercase
/// hex digits.
std::string generate_token();

/// Compares in time independent of where the first difference is (CRYPTO_memcmp), so
/// a client cannot learn the token byte by byte from response times.
bool tokens_equal(std::string_view a, std::string_view b);

/// Creates `path` with mode 0600 holding `token`; refuses to replace an existing file.
void write_token_file(const std::string& path, const std::string& token);

/// Reads a token file; refuses one that group or others can read or that another user
/// owns, naming the problem and the fix (chmod 600).
std::string read_token_file(const std::string& path);

}  // namespace slurmtune::protocol
