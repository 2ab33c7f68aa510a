#pragma once
// Which observations a model conditions on once there are more than it can afford
// (MobsterOptions::max_observations): the better half by rank among the observations at
// the same resource, then the most recent of the rest, in arrival order. Rank k of n at
// a resource is k / n (0 the best); ties in rank go to the earlier arrival; a NaN score
// ranks below every number.
//
// `choose_observations` answers for the first `count` observations from scratch (a
// hyperparameter fit on a prefix, once per refit point). `ObservationChoice` keeps the
// answer for all of them up to date as they arrive, at a cost per observation bounded by
// the limit and per question by the limit times the resources seen, so a suggestion with
// 100,000 observations does not sort 100,000 scores (issue #62). Both give the same
// answer; the tests check it.
#include <cstddef>
#include <map>
#include <span>
#include <vector>

namespace slurmtune::core::gp {

/// What ranking needs of an observation.
struct RankedScore {
  double resource;
  double score;  ///< larger is better
};

/// At most `limit` of the first `count` of `all`, as indices in arrival order.
std::vector<std::size_t> choose_observations(std::span<const RankedScore> all, std::size_t count,
                                             std::size_t limit);

class ObservationChoice {
 public:
  explicit ObservationChoice(std::size_t limit) : limit_(limit) {}
  /// The next observation in arrival order (index = the number added before it).
  void add(RankedScore observation);
  /// choose_observations(all added, all added, limit).
  std::vector<std::size_t> chosen() const;
  std::size_t size() const { return count_; }

  template <class Archive>
  void serialize(Archive& archive) {
    archive(count_, resources_);
  }

 private:
  struct Ranked {
    double key;         // the score, NaN as -infinity
    std::size_t index;  // arrival
    template <class Archive>
    void serialize(Archive& archive) {
      archive(key, index);
    }
  };
  // Per resource: how many observations it has, and its best limit / 2 in rank order
  // (no observation beyond them can be in the better half).
  struct AtResource {
    std::size_t members = 0;
    std::vector<Ranked> best;
    template <class Archive>
    void serialize(Archive& archive) {
      archive(members, best);
    }
  };
  std::size_t limit_;
  std::size_t count_ = 0;
  std::map<double, AtResource> resources_;
};

}  // namespace slurmtune::core::gp
