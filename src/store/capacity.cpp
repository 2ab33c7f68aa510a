#include "store/capacity.hpp"

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "store/file/hdf5.hpp"
#include "store/schema.hpp"

namespace slurmtune::store {
namespace {

// H5Tencode's size of the largest row type a dataset can be created with, less a margin:
// measured with HDF5 1.10.8, /trials of 1,875 short-named parameters (128,629 bytes
// encoded) is created and one of 1,900 (130,329 bytes) is refused (the type's message
// outgrows the object header; H5Tencode's format is about twice the on-disk one).
constexpr std::size_t kMaxTypeBytes = std::size_t{120} * 1024;

std::size_t encoded_size(const RowLayout& layout) {
  const Hid type = layout.compound_type();
  std::size_t size = 0;
  if (H5Tencode(type, nullptr, &size) < 0) return 0;  // not measurable: the write will say
  return size;
}

}  // namespace

void check_results_file_capacity(const core::StudySpec& spec) {
  quiet_hdf5_errors();
  const StudyLayout layout(spec);
  const std::vector<std::pair<const char*, const RowLayout*>> tables = {
      {"/trials", &layout.trials}, {"/metrics", &layout.metrics}, {"/exploits", &layout.exploits}};
  for (const auto& [name, rows] : tables) {
    if (rows->row_size() == 0) continue;  // a table this study has no columns for
    const std::size_t size = encoded_size(*rows);
    if (size <= kMaxTypeBytes) continue;
    throw InputError(spec.path + ": the results file cannot hold this study: a row of " + name +
                     " (" + std::to_string(spec.space.parameters().size()) + " parameters, " +
                     std::to_string(spec.metrics.size()) + " metrics) would be described in " +
                     std::to_string(size) + " bytes, and HDF5 allows " +
                     std::to_string(kMaxTypeBytes) +
                     "; use fewer parameters or metrics, shorter names or fewer choice values");
  }
}

}  // namespace slurmtune::store
