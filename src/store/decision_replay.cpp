#include "store/decision_replay.hpp"

#include <openssl/evp.h>

#include <array>
#include <cereal/archives/portable_binary.hpp>
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/number_text.hpp"
#include "core/state_archive.hpp"
#include "core/state_archive_io.hpp"
#include "core/study/decision_state.hpp"
#include "core/study/scheduler_factory.hpp"
#include "core/study/suggester_factory.hpp"
#include "store/resume.hpp"

namespace slurmtune::store {
namespace {

constexpr std::array<char, 8> kMagic = {'S', 'T', 'S', 'N', 'A', 'P', '0', '1'};
constexpr std::size_t kDigest = 32;  // SHA-256
// magic, format, seq, reports, length of the whole
constexpr std::size_t kHeader = kMagic.size() + 4 + 8 + 8 + 8;
static_assert(kHeader == kSnapshotHeaderBytes);

std::array<unsigned char, kDigest> sha256(std::string_view bytes) {
  std::array<unsigned char, kDigest> out{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != kDigest)
    throw Error("SHA-256 of a decision snapshot (OpenSSL EVP_Digest) failed");
  return out;
}

template <class Word>
void put_le(std::string& out, Word value) {
  for (std::size_t i = 0; i < sizeof(Word); ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

template <class Word>
Word get_le(std::string_view bytes, std::size_t at) {
  Word value = 0;
  for (std::size_t i = 0; i < sizeof(Word); ++i)
    value |= static_cast<Word>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

std::optional<core::Observation> observation(const EventRecord& e) {
  if (std::isnan(e.step)) return std::nullopt;
  return core::Observation{e.step, e.value};
}

}  // namespace

bool decision_snapshots_possible(const core::StudySpec& spec) {
  return !(spec.sampler.suggest_ahead && core::is_model_based(spec.sampler.kind));
}

std::optional<std::size_t> snapshot_length(std::string_view header) {
  if (header.size() < kHeader || std::memcmp(header.data(), kMagic.data(), kMagic.size()) != 0)
    return std::nullopt;
  const auto length = get_le<std::uint64_t>(header, kMagic.size() + 20);
  if (length < kHeader + kDigest) return std::nullopt;
  return static_cast<std::size_t>(length);
}

std::optional<SnapshotHeader> check_snapshot(std::string_view bytes, std::string& why) {
  if (snapshot_length(bytes) != bytes.size()) {
    why = "not a decision snapshot (" + std::to_string(bytes.size()) + " bytes)";
    return std::nullopt;
  }
  const std::string_view content = bytes.substr(0, bytes.size() - kDigest);
  const auto digest = sha256(content);
  if (std::memcmp(digest.data(), bytes.data() + content.size(), kDigest) != 0) {
    why = "its SHA-256 does not match (a write that did not finish)";
    return std::nullopt;
  }
  SnapshotHeader header;
  header.format = get_le<std::uint32_t>(bytes, kMagic.size());
  header.seq = get_le<std::uint64_t>(bytes, kMagic.size() + 4);
  header.reports = get_le<std::uint64_t>(bytes, kMagic.size() + 12);
  return header;
}

DecisionReplay::DecisionReplay(const core::StudySpec& recorded, const core::StudySpec& now,
                               std::string path)
    : path_(std::move(path)),
      scheduler_(
          core::make_scheduler(recorded.scheduler, recorded.mode, recorded.seed, recorded.name)),
      suggester_(
          core::make_suggester(now.space, now.sampler, now.mode == core::Mode::Max, now.seed)) {
  core::connect_model(*scheduler_, *suggester_);
}

void DecisionReplay::add_session(std::uint64_t first_seq) {
  session_starts_.push_back(first_seq);
  // A session whose rows the replay is past (a snapshot's): its start was seen then.
  if (last_seq_ && first_seq <= *last_seq_) next_session_ = session_starts_.size();
}

void DecisionReplay::set_last_start(core::TrialId trial, const core::SamplerPosition& position) {
  last_of_file_.emplace(trial, position);
}

void DecisionReplay::row_seq(std::uint64_t seq) {
  bool crossed = false;
  while (next_session_ < session_starts_.size() && seq >= session_starts_[next_session_]) {
    crossed = true;
    ++next_session_;
  }
  if (crossed) suggester_->session_began();
  last_seq_ = seq;
}

void DecisionReplay::set_last_step(core::TrialId trial, double step) {
  if (trial >= last_steps_.size()) last_steps_.resize(trial + 1, NAN);
  last_steps_[trial] = step;
}

// The exploits the scheduler just decided; an exploited trial goes on from its donor's
// step.
void DecisionReplay::take_exploits() {
  for (auto& [trial, exploit] : scheduler_->take_exploits()) {
    set_last_step(trial, exploit.donor_step);
    awaited_.erase(trial);
    exploits_.emplace_back(trial, std::move(exploit));
  }
}

void DecisionReplay::event(const EventRecord& e, const core::Configuration* config) {
  row_seq(e.seq);
  core::Scheduler& scheduler = *scheduler_;
  core::Suggester& suggester = *suggester_;
  switch (e.kind) {
    case EventKind::Start:
      if (!config)
        throw InputError(path_ + ": corrupted: trial " + std::to_string(e.trial) +
                         " started (seq " + std::to_string(e.seq) + ") but has no /trials row");
      scheduler.add_trial(e.trial, std::nullopt);
      scheduler.trial_configured(e.trial, *config);
      suggester.started(e.trial, *config);
      suggester.began_at(e.trial, 0, e.time);
      last_started_ = e.trial;
      // suggest_ahead made the next trial's suggestion here (SuggestionsAhead).
      if (last_of_file_ && last_of_file_->first == e.trial)
        suggester.replayed_last_start(e.trial, last_of_file_->second);
      break;
    case EventKind::Resume: {
      // The original run got this resumption from next_job(); asking again moves the
      // scheduler's promotion queue exactly as it moved then.
      const auto job = scheduler.next_job(false);
      if (!job || job->kind != core::Job::Kind::Resume || job->trial != e.trial)
        throw InputError(path_ + ": replaying seq " + std::to_string(e.seq) + ": the scheduler " +
                         "would not resume trial " + std::to_string(e.trial) +
                         " here; the file was written by a different scheduler version");
      suggester.resumed(e.trial);
      suggester.began_at(e.trial, e.step, e.time);
      break;
    }
    case EventKind::Closed:
      scheduler.close_admissions();
      break;
    case EventKind::Checkpoint:
      scheduler.checkpoint_saved(e.trial, e.step);
      awaited_.erase(e.trial);
      break;
    case EventKind::Reopen:
      // The session that wrote it reopened the trial after the same replay.
      if (!scheduler.reopen(e.trial))
        throw InputError(path_ + ": replaying seq " + std::to_string(e.seq) + ": the scheduler " +
                         "cannot reopen trial " + std::to_string(e.trial) +
                         " here (it did not end while paused); the file was written by a " +
                         "different scheduler version or altered");
      break;
    default:
      // Ends of trials; decisions are outcomes of reports, not inputs.
      if (const auto how = trial_end_of(e.kind)) {
        scheduler.end_trial(e.trial, *how, observation(e));
        suggester.ended(e.trial, *how);
        awaited_.erase(e.trial);
      }
      break;
  }
  take_exploits();
}

void DecisionReplay::metric(const MetricRecord& m) {
  row_seq(m.seq);
  // The control plane refuses such steps: a file holding one was written otherwise.
  if (!(m.step >= 0 && m.step <= 9007199254740992.0))
    throw InputError(path_ + ": corrupted: /metrics row of seq " + std::to_string(m.seq) +
                     " (trial " + std::to_string(m.trial) + ") has step " +
                     core::format_double(m.step) + ", which no report can have (0 to 2^53)");
  const double value = m.values.empty() ? NAN : m.values[0];
  suggester_->reported_at(m.trial, m.step, m.time);
  suggester_->reported_metrics(m.trial, m.step, m.values);
  scheduler_->reported_metrics(m.trial, m.step, m.values);
  const core::ReportOutcome outcome = scheduler_->report(m.trial, m.step, value);
  suggester_->reported(m.trial, m.step, value, outcome);
  if (outcome.checkpoint) awaited_[m.trial] = m.step;
  set_last_step(m.trial, m.step);
  ++reports_;
  take_exploits();
}

std::map<core::TrialId, double> DecisionReplay::last_steps() const {
  std::map<core::TrialId, double> out;
  for (core::TrialId trial = 0; trial < last_steps_.size(); ++trial)
    if (!std::isnan(last_steps_[trial])) out.emplace_hint(out.end(), trial, last_steps_[trial]);
  return out;
}

std::string DecisionReplay::snapshot() const {
  std::string bytes(kMagic.begin(), kMagic.end());
  put_le<std::uint32_t>(bytes, core::kStateFormat);
  put_le<std::uint64_t>(bytes, next_seq());
  put_le<std::uint64_t>(bytes, reports_);
  put_le<std::uint64_t>(bytes, 0);  // the length, once known
  std::ostringstream body;
  {
    core::StateOut archive(body);
    archive(last_steps_, awaited_, exploits_, reports_, last_seq_, last_started_);
  }
  bytes += std::move(body).str();
  bytes += core::save_decision_state(*scheduler_, *suggester_);
  const std::uint64_t length = bytes.size() + kDigest;
  for (std::size_t i = 0; i < 8; ++i)
    bytes[kMagic.size() + 20 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
  const auto digest = sha256(bytes);
  bytes.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return bytes;
}

void DecisionReplay::load(std::string_view bytes) {
  std::string why;
  const auto header = check_snapshot(bytes, why);
  if (!header) throw InputError(path_ + ": the decision snapshot is unusable: " + why);
  if (header->format != core::kStateFormat)
    throw InputError(path_ + ": the decision snapshot has state format " +
                     std::to_string(header->format) + ", this build reads " +
                     std::to_string(core::kStateFormat));
  const std::string_view content = bytes.substr(kHeader, bytes.size() - kHeader - kDigest);
  std::istringstream stream{std::string(content)};
  try {
    core::StateIn archive(stream);
    archive(last_steps_, awaited_, exploits_, reports_, last_seq_, last_started_);
  } catch (const cereal::Exception& e) {
    throw InputError(path_ + ": the decision snapshot's bookkeeping does not read: " + e.what());
  }
  const auto at = static_cast<std::size_t>(stream.tellg());
  try {
    core::load_decision_state(content.substr(at), *scheduler_, *suggester_);
  } catch (const InputError& e) {
    throw InputError(path_ + ": the decision snapshot is not this study's: " + e.what());
  }
  core::connect_model(*scheduler_, *suggester_);
  if (next_seq() != header->seq)
    throw InputError(path_ + ": the decision snapshot says seq " + std::to_string(header->seq) +
                     " but holds rows up to " + std::to_string(next_seq()));
  while (next_session_ < session_starts_.size() && last_seq_ &&
         session_starts_[next_session_] <= *last_seq_)
    ++next_session_;
}

}  // namespace slurmtune::store
