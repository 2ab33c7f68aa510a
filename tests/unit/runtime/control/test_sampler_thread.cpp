// suggest_ahead in `run`: the sampler's calls run on a thread of their own, in the order
// posted; a suggestion made ahead is not ready until that thread has made it, the loop
// is woken when it is, and it equals the suggestion made inline (simulate, replay). What
// the thread throws is rethrown on the loop.
#define BOOST_TEST_MODULE runtime_sampler_thread
#include <boost/test/unit_test.hpp>
#include <memory>
#include <mutex>
#include <semaphore>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/search/suggestions_ahead.hpp"
#include "core/study/suggester_factory.hpp"
#include "runtime/control/event_loop.hpp"
#include "runtime/control/sampler_thread.hpp"
#include "unit/core/search/suggester_testing.hpp"

using namespace slurmtune;
using namespace slurmtune::runtime;
using namespace slurmtune::testing;

namespace {

// A sampler whose suggestions wait for the test's permission (so "not ready yet" is
// certain, not a matter of timing), noting which threads call it; it fails on `fail_at`.
class GatedSampler final : public core::Suggester {
 public:
  GatedSampler(std::unique_ptr<core::Suggester> inner, std::counting_semaphore<>& gate)
      : inner_(std::move(inner)), gate_(gate) {}
  std::optional<core::TrialId> fail_at;

  core::Suggestion suggest(core::TrialId trial) override {
    note();
    gate_.acquire();
    if (fail_at == trial) throw std::runtime_error("the model broke at trial 3");
    return inner_->suggest(trial);
  }
  void began_at(core::TrialId trial, double step, double time_s) override {
    note();
    inner_->began_at(trial, step, time_s);
  }
  void reported_at(core::TrialId trial, double step, double time_s) override {
    note();
    inner_->reported_at(trial, step, time_s);
  }
  void reported(core::TrialId trial, double step, double value,
                const core::ReportOutcome& outcome) override {
    note();
    inner_->reported(trial, step, value, outcome);
  }
  void ended(core::TrialId trial, core::TrialEnd how) override {
    note();
    inner_->ended(trial, how);
  }
  void save_state(core::StateOut& archive) const override { inner_->save_state(archive); }
  void load_state(core::StateIn& archive) override { inner_->load_state(archive); }
  std::vector<std::thread::id> threads() {
    const std::lock_guard lock(mutex_);
    return threads_;
  }

 private:
  void note() {
    const std::lock_guard lock(mutex_);
    threads_.push_back(std::this_thread::get_id());
  }
  std::unique_ptr<core::Suggester> inner_;
  std::counting_semaphore<>& gate_;
  std::mutex mutex_;
  std::vector<std::thread::id> threads_;
};

// Turns the loop until `done` or 200 turns of up to 100 ms (a bound, not a timing check).
template <typename Done>
void turn_until(EventLoop& loop, Done done) {
  for (int turn = 0; turn < 200 && !done(); ++turn)
    loop.run_once(100);
}

// Two trials at once: trial t-1 reports and ends after trial t starts.
void events_after_start(core::Suggester& s, const core::SearchSpace& space,
                        const std::vector<core::Suggestion>& made, core::TrialId t) {
  s.began_at(t, 0, static_cast<double>(t));
  if (t == 0) return;
  s.reported_at(t - 1, 1, static_cast<double>(t) + 0.5);
  s.reported(t - 1, 1, loss_of(space, made[t - 1].config), at_rung(1));
  s.ended(t - 1, core::TrialEnd::Completed);
}

}  // namespace

BOOST_AUTO_TEST_CASE(suggestions_made_on_the_thread_equal_those_made_inline) {
  const auto space = every_kind();
  constexpr core::TrialId kTrials = 20;
  core::SamplerSpec spec = mobster_spec(4);
  spec.suggest_ahead = true;

  const auto inline_made = core::make_suggester(space, spec, false, 7);
  std::vector<core::Suggestion> expected;
  for (core::TrialId t = 0; t < kTrials; ++t) {
    expected.push_back(inline_made->suggest(t));
    events_after_start(*inline_made, space, expected, t);
  }

  spec.suggest_ahead = false;
  std::counting_semaphore<> gate(0);
  auto gated = std::make_unique<GatedSampler>(core::make_suggester(space, spec, false, 7), gate);
  GatedSampler& sampler = *gated;
  EventLoop loop;  // before the thread's owner: the thread leaves the loop as it ends
  core::SuggestionsAhead ahead(std::move(gated));
  ahead.run_calls(std::make_unique<SamplerThread>(loop, ahead.sampler()));
  std::vector<core::Suggestion> made;
  for (core::TrialId t = 0; t < kTrials; ++t) {
    if (t == 0) {
      BOOST_TEST(ahead.ready(0));  // a session's first: made when asked, the loop waits
      gate.release();
    } else {
      BOOST_TEST(!ahead.ready(t));  // on its way since trial t-1 started, held at the gate
      gate.release();
      // The thread wakes the loop (its eventfd is the loop's only one; 10 s is a bound).
      BOOST_TEST(loop.run_once(10000) == 1);
      BOOST_TEST(ahead.ready(t));
    }
    made.push_back(ahead.suggest(t));
    if (t == 0) BOOST_TEST(loop.run_once(10000) == 1);  // its wake-up, drained
    events_after_start(ahead, space, made, t);
  }
  for (core::TrialId t = 0; t < kTrials; ++t) {
    BOOST_TEST_INFO("trial " << t);
    BOOST_TEST((made[t].config == expected[t].config));
    BOOST_TEST((made[t].info.position == expected[t].info.position));
  }
  gate.release();  // trial kTrials's suggestion, made ahead: let it end
  const auto loop_thread = std::this_thread::get_id();
  for (const auto id : sampler.threads())
    BOOST_TEST((id != loop_thread));
}

BOOST_AUTO_TEST_CASE(what_the_thread_throws_is_rethrown_on_the_loop) {
  const auto space = every_kind();
  // Three suggestions pass; trial 3's, made ahead on the thread, waits until trial 2's
  // events are posted (else the loop's next call may rethrow it among them, not below).
  std::counting_semaphore<> gate(3);
  auto gated =
      std::make_unique<GatedSampler>(core::make_suggester(space, tpe_spec(2), false, 3), gate);
  gated->fail_at = 3;
  EventLoop loop;
  core::SuggestionsAhead ahead(std::move(gated));
  ahead.run_calls(std::make_unique<SamplerThread>(loop, ahead.sampler()));
  std::vector<core::Suggestion> made;
  for (core::TrialId t = 0; t < 3; ++t) {
    turn_until(loop, [&] { return ahead.ready(t); });
    made.push_back(ahead.suggest(t));
    events_after_start(ahead, space, made, t);
  }
  gate.release();
  // Trial 3's suggestion failed on the thread: the next call that asks says so.
  BOOST_CHECK_EXCEPTION(
      {
        turn_until(loop, [&] { return ahead.ready(3); });
        ahead.suggest(3);
      },
      std::runtime_error,
      [](const std::runtime_error& e) {
        return std::string(e.what()) == "the model broke at trial 3";
      });
}
