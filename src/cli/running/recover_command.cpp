// `slurmtune recover STUDY.h5`: the rows a killed coordinator had only in the results
// file's write-ahead log (STUDY.h5-wal) go into the file, so that its readers (status,
// h5py, html) see every report a trial heard the answer to, without resuming the study.
// A resume does the same first; this is for a study that will not be resumed, or to look
// at one before resuming it. It holds the study's lock meanwhile: while a run holds it,
// the log is that run's own and is left alone.
#include <filesystem>
#include <iostream>

#include "cli/options.hpp"
#include "core/error.hpp"
#include "runtime/log.hpp"
#include "runtime/recording/study_lock.hpp"
#include "runtime/study_paths.hpp"
#include "store/study_writer.hpp"

namespace slurmtune::cli {

int recover_command(const Args& args) {
  po::options_description options("recover options");
  options.add_options()("study-file", po::value<std::string>()->required(), "results file (HDF5)");
  po::positional_options_description positional;
  positional.add("study-file", 1);
  po::variables_map vm;
  if (!parse_options(args, "slurmtune recover STUDY.h5", options, positional, vm)) return kSuccess;
  const auto path = vm["study-file"].as<std::string>();
  if (!std::filesystem::exists(path)) throw InputError(path + ": no such results file");
  const runtime::StudyLock lock(runtime::lock_file_of(path), &runtime::log_line);
  const auto applied = store::StudyWriter::apply_log(path);
  std::cout << path << ": "
            << applied.value_or(
                   "no write-ahead log beside it: the file holds every row its writer made durable")
            << "\n";
  return kSuccess;
}

}  // namespace slurmtune::cli
