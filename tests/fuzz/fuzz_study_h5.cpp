// libFuzzer target: the results file reader behind `status`, `best`, `export` and
// resume. The input is written to a file and read the way `slurmtune status` reads it;
// a damaged file must throw ResultsFileFormatError (or InputError), never crash or hang.
// HDF5 itself is not instrumented: the target guards slurmtune's use of it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "store/study_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // In TMPDIR, which run_fuzzer.py points into the test's own work folder: a fork-mode
  // child stopped at the time budget cannot remove its last input, and the folder, not
  // the system's temp folder, keeps it.
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("slurmtune-fuzz-" + std::to_string(::getpid()) + ".h5"))
                                      .string();
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    const slurmtune::store::StudyReader reader(path);
    static_cast<void>(reader.trials());
    reader.for_each_metric([](const slurmtune::store::MetricRecord&) {}, 64);
    static_cast<void>(reader.events());
    static_cast<void>(reader.checkpoints());
    static_cast<void>(reader.sessions());
  } catch (const slurmtune::InputError&) {  // ResultsFileFormatError is one
  }
  // Written anew for every input: nothing is left in the temp folder when the run ends
  // (a crash leaves the input that caused it there, beside libFuzzer's own copy).
  std::remove(path.c_str());
  return 0;
}
