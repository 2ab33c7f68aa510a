#pragma once
// The exception types every slurmtune module throws. A message says what went wrong,
// where (file:line:column, key, trial) and how to fix it; callers catch `Error`.
#include <stdexcept>
#include <string>

namespace slurmtune {

/// Base of every slurmtune exception.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The user's input (a study file, an event log, a command-line value) is wrong.
class InputError : public Error {
 public:
  using Error::Error;
};

/// The caller broke an API contract (a bug in the caller, not bad user input).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace slurmtune
