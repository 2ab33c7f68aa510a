// A data-parallel MLP on the UCI handwritten digits (8x8 images, 10 classes), tuned by
// slurmtune with ASHA. Each trial trains on its own MPI communicator: the ranks split
// every minibatch, average their gradients (slurmtune::dp), start from trial rank 0's
// weights, scale the learning rate with the number of ranks after a linear warm-up, and
// report the validation accuracy each epoch. Checkpoints (weights, optimizer state,
// epoch) are written collectively when the study asks and restored on a retry, a
// promotion or a resumed study.
//
//   mlp_digits [--data digits.csv.gz]   (run by `slurmtune run study.toml`)
//
// The data is scikit-learn's copy of the UCI set (Debian: python3-sklearn ships
// sklearn/datasets/data/digits.csv.gz): 1,797 rows of 64 pixel values (0-16) and a label.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <slurmtune/dp.hpp>
#include <slurmtune/trial.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kInputs = 64, kClasses = 10;
std::string data_path = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

struct Dataset {
  std::vector<float> x;  // rows x 64, scaled to [0, 1]
  std::vector<int> y;
  std::size_t rows() const { return y.size(); }
};

// Reads the gzipped CSV; the same shuffled 80/20 split on every rank and every trial.
std::pair<Dataset, Dataset> load_digits(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    throw std::runtime_error("cannot open " + path + " (Debian: apt install python3-sklearn)");
  Dataset all;
  char line[4096];
  while (gzgets(file, line, sizeof line)) {
    char* cursor = line;
    for (int i = 0; i < kInputs; ++i)
      all.x.push_back(std::strtof(cursor, &cursor) / 16.0f), ++cursor;
    all.y.push_back(static_cast<int>(std::strtol(cursor, &cursor, 10)));
  }
  gzclose(file);
  if (all.rows() < 100) throw std::runtime_error(path + ": expected 1,797 digits");
  std::vector<std::size_t> order(all.rows());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(20261122));
  Dataset train, val;
  for (std::size_t k = 0; k < order.size(); ++k) {
    Dataset& d = k < order.size() * 4 / 5 ? train : val;
    d.x.insert(d.x.end(), all.x.begin() + order[k] * kInputs,
               all.x.begin() + (order[k] + 1) * kInputs);
    d.y.push_back(all.y[order[k]]);
  }
  return {train, val};
}

// 64 -> hidden (ReLU) -> 10 (softmax); all parameters in one vector for the collectives.
struct Mlp {
  int hidden;
  std::vector<double> p;  // w1 (64 x h), b1 (h), w2 (h x 10), b2 (10)
  explicit Mlp(int h)
      : hidden(h), p(static_cast<std::size_t>(kInputs * h + h + h * kClasses + kClasses)) {}
  double* w1() { return p.data(); }
  double* b1() { return w1() + kInputs * hidden; }
  double* w2() { return b1() + hidden; }
  double* b2() { return w2() + hidden * kClasses; }

  void init(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> n1(0, std::sqrt(2.0 / kInputs)),
        n2(0, std::sqrt(2.0 / hidden));
    std::fill(p.begin(), p.end(), 0.0);
    for (int i = 0; i < kInputs * hidden; ++i)
      w1()[i] = n1(rng);
    for (int i = 0; i < hidden * kClasses; ++i)
      w2()[i] = n2(rng);
  }

  // Forward pass of one row; returns the class probabilities, fills the hidden layer.
  std::array<double, kClasses> forward(const float* x, std::vector<double>& h) {
    h.assign(static_cast<std::size_t>(hidden), 0.0);
    for (int j = 0; j < hidden; ++j) {
      double s = b1()[j];
      for (int i = 0; i < kInputs; ++i)
        s += x[i] * w1()[i * hidden + j];
      h[static_cast<std::size_t>(j)] = std::max(0.0, s);
    }
    std::array<double, kClasses> z{};
    for (int k = 0; k < kClasses; ++k) {
      double s = b2()[k];
      for (int j = 0; j < hidden; ++j)
        s += h[static_cast<std::size_t>(j)] * w2()[j * kClasses + k];
      z[static_cast<std::size_t>(k)] = s;
    }
    const double top = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (double& v : z)
      sum += (v = std::exp(v - top));
    for (double& v : z)
      v /= sum;
    return z;
  }

  // Adds this row's cross-entropy gradient to `g`.
  void backward(const float* x, int label, std::vector<double>& g) {
    std::vector<double> h;
    auto prob = forward(x, h);
    prob[static_cast<std::size_t>(label)] -= 1.0;
    double* gw1 = g.data();
    double* gb1 = gw1 + kInputs * hidden;
    double* gw2 = gb1 + hidden;
    double* gb2 = gw2 + hidden * kClasses;
    for (int k = 0; k < kClasses; ++k)
      gb2[k] += prob[static_cast<std::size_t>(k)];
    for (int j = 0; j < hidden; ++j) {
      const double hj = h[static_cast<std::size_t>(j)];
      double back = 0;
      for (int k = 0; k < kClasses; ++k) {
        gw2[j * kClasses + k] += hj * prob[static_cast<std::size_t>(k)];
        back += w2()[j * kClasses + k] * prob[static_cast<std::size_t>(k)];
      }
      if (hj <= 0) continue;
      gb1[j] += back;
      for (int i = 0; i < kInputs; ++i)
        gw1[i * hidden + j] += x[i] * back;
    }
  }
};

// SGD with momentum 0.9, or Adam; the state is checkpointed with the weights.
struct Optimizer {
  bool adam;
  std::vector<double> m, v;
  double t = 0;
  Optimizer(bool use_adam, std::size_t n) : adam(use_adam), m(n, 0.0), v(n, 0.0) {}
  void step(std::vector<double>& p, const std::vector<double>& g, double lr) {
    t += 1;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!adam) {
        m[i] = 0.9 * m[i] + g[i];
        p[i] -= lr * m[i];
        continue;
      }
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
      p[i] -= lr * mh / (std::sqrt(vh) + 1e-8);
    }
  }
};

void train(slurmtune::Trial& t) {
  static const auto [train_set, val_set] = load_digits(data_path);
  const double lr = t.param<double>("lr");
  const int batch = static_cast<int>(t.param<std::int64_t>("batch_size"));  // per rank
  const int hidden = static_cast<int>(t.param<std::int64_t>("hidden"));
  const double warmup = static_cast<double>(t.param<std::int64_t>("warmup_epochs"));
  Mlp net(hidden);
  Optimizer opt(t.param<std::string>("optimizer") == "adam", net.p.size());
  net.init(t.id());
  slurmtune::dp::broadcast(t, net.p);  // every replica starts from trial rank 0's weights
  int first_epoch = 1;
  t.restore([&](slurmtune::CheckpointReader& r) {
    net.p = r.read_root("weights");
    opt.m = r.read_root("m");
    opt.v = r.read_root("v");
    opt.t = r.read_root("t").at(0);
    first_epoch = static_cast<int>(r.step()) + 1;
  });

  std::vector<std::size_t> order(train_set.rows());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> grad(net.p.size());
  const std::size_t global_batch =
      static_cast<std::size_t>(batch) * static_cast<std::size_t>(t.size());
  for (int epoch = first_epoch;; ++epoch) {
    std::shuffle(order.begin(), order.end(),
                 std::mt19937(static_cast<unsigned>(epoch * 7919 + t.id())));
    for (std::size_t start = 0; start + global_batch <= order.size(); start += global_batch) {
      // Each rank takes its slice of the global minibatch; the mean gradient over the
      // global batch is the average of the ranks' mean gradients.
      std::fill(grad.begin(), grad.end(), 0.0);
      const auto [first, last] = slurmtune::dp::shard(global_batch, t.rank(), t.size());
      for (std::size_t k = start + first; k < start + last; ++k)
        net.backward(&train_set.x[order[k] * kInputs], train_set.y[order[k]], grad);
      for (double& g : grad)
        g /= static_cast<double>(last - first);
      slurmtune::dp::average(t, grad);
      const double progress =
          epoch - 1 + static_cast<double>(start) / static_cast<double>(order.size());
      opt.step(net.p, grad, slurmtune::dp::warmup_lr(lr, t.size(), progress, warmup));
    }
    // Validation: each rank scores its shard; counts are summed over the trial.
    double score[3] = {0, 0, 0};  // correct, loss, rows
    const auto [vfirst, vlast] = slurmtune::dp::shard(val_set.rows(), t.rank(), t.size());
    std::vector<double> h;
    for (std::size_t k = vfirst; k < vlast; ++k) {
      const auto prob = net.forward(&val_set.x[k * kInputs], h);
      const auto best = std::max_element(prob.begin(), prob.end()) - prob.begin();
      score[0] += best == val_set.y[k] ? 1 : 0;
      score[1] -= std::log(std::max(1e-12, prob[static_cast<std::size_t>(val_set.y[k])]));
      score[2] += 1;
    }
    slurmtune::dp::sum(t, score);
    const auto decision =
        t.report(epoch, {{"val_accuracy", score[0] / score[2]}, {"val_loss", score[1] / score[2]}});
    // Every 3 epochs, and whenever the study asks (a rung passed, a pause, a shutdown).
    if (epoch % 3 == 0 || t.should_checkpoint() || decision == slurmtune::Decision::Pause)
      t.checkpoint(epoch, [&](slurmtune::CheckpointWriter& w) {
        w.write_root("weights", net.p);
        w.write_root("m", opt.m);
        w.write_root("v", opt.v);
        const double steps[1] = {opt.t};
        w.write_root("t", steps);
      });
    if (decision != slurmtune::Decision::Continue) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--data") data_path = argv[i + 1];
  return slurmtune::run_trials(argc, argv, train);
}
