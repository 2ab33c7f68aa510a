#pragma once
// Text for a failed libcrypto call (the control plane's HMAC, hashes and random tokens).
#include <openssl/err.h>

#include <string>

namespace slurmtune::protocol {

/// "<what> failed: <OpenSSL's reason>" for the oldest error on this thread's queue; the
/// queue is emptied, so a later failure does not report this one again.
inline std::string openssl_error(const std::string& what) {
  std::string text = what + " failed";
  if (const unsigned long code = ERR_get_error(); code != 0) {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof reason);
    text += ": ";
    text += reason;
  }
  ERR_clear_error();
  return text;
}

}  // namespace slurmtune::protocol
