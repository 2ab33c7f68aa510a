// [checkpoints]: which checkpoints slurmtune removes (core/study/checkpoint_retention.hpp),
// and where they go: the trials' own folders, a folder every node mounts, or each node's
// own disk (node_local).
#include <toml++/toml.h>

#include <filesystem>

#include "config/section_readers.hpp"
#include "config/table_reader.hpp"

namespace slurmtune::config {
namespace {

constexpr std::string_view kNodeName = "{node}";

void read_folder(TableReader& r, core::CheckpointPolicy& policy) {
  const auto folder = r.string("folder");
  if (const auto local = r.boolean("node_local")) policy.node_local = *local;
  if (!folder) {
    if (policy.node_local)
      r.fail("node_local",
             "needs folder: the path of the node's own disk, the same on every node (for "
             "example \"/local/nvme/me/mlp\"; \"{node}\" stands for the node's name)");
    return;
  }
  if (folder->empty())
    r.fail("folder", "is empty; name a folder for the checkpoints, or leave folder out");
  if (folder->find('\0') != std::string::npos) r.fail("folder", "holds a NUL byte");
  for (const auto& part : std::filesystem::path(*folder))
    if (!part.empty() && part.string().back() == ':')
      r.fail("folder", "has a folder name ending in ':' (\"" + part.string() +
                           "\"), which the results file would read as NODE:/path");
  if (policy.node_local && !std::filesystem::path(*folder).is_absolute())
    r.fail("folder",
           "must be absolute with node_local = true: it names a folder on every node's own "
           "disk, not one next to the study file");
  if (!policy.node_local && folder->find(kNodeName) != std::string::npos)
    r.fail("folder",
           "holds \"{node}\", which stands for a node's name only with node_local = true (a "
           "folder every node mounts is one folder)");
  policy.folder = *folder;
}

}  // namespace

void read_checkpoints(TableReader r, core::StudySpec& study) {
  auto& policy = study.checkpoints;
  if (const auto n = r.integer("keep_per_trial")) {
    if (*n < 1)
      r.fail("keep_per_trial", "must be >= 1: a trial's newest checkpoint is what it resumes from");
    policy.keep_per_trial = n;
  }
  if (const auto n = r.integer("keep_ended")) {
    if (*n < 0) r.fail("keep_ended", "must be >= 0");
    if (study.multi_objective())
      r.fail("keep_ended",
             "ranks ended trials by the study's one metric; a study of several objectives has "
             "no one best (leave keep_ended out, or keep every checkpoint)");
    policy.keep_ended = n;
  }
  read_folder(r, policy);
  r.finish();
}

// A node's own disk is seen by that node's agent alone: slurmtune's own file work there
// (making a trial's folder, removing what the policy drops, PBT's copies) goes through
// it, and a trial resumes where its checkpoint is. Trials that are not an agent's
// children cannot.
void check_node_local_checkpoints(const toml::table& root, const core::StudySpec& study,
                                  const std::string& source) {
  if (!study.checkpoints.node_local) return;
  const auto& table = *root.get("checkpoints")->as_table();
  TableReader r(table, "checkpoints", source);
  const auto refuse = [&](const std::string& why) {
    r.fail_at(*table.get("node_local"), "node_local", why);
  };
  if (study.resources.launch != core::ResourceSpec::Launch::Worker)
    refuse(
        "needs [resources] launch = \"worker\": the node agents make, find and remove the "
        "checkpoints on their nodes' own disks");
  if (study.resources.ranks() > 1)
    refuse("takes trials of one rank: a trial of " + std::to_string(study.resources.ranks()) +
           " ranks would have to resume on the very nodes that hold its ranks' checkpoints; "
           "use a folder every node mounts");
}

}  // namespace slurmtune::config
