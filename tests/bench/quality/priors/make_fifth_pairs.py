#!/usr/bin/python3
"""Records the fifth claim pairs of issue #64, item 2 (priors from earlier studies), from
real training on this machine, after the protocol that judges them was fixed
(doc/performance/search-quality.md, "Fifth claim pairs of issue #64 (item 2)"). Each pair
is one model family at two sizes, the same configurations (drawn once, fixed seed) trained
on both, as make_transfer_tables.py records the earlier pairs. The families are those
whose single tables left a search room at 32 workers (a narrow good region, 20 or more
parameters), so that what a prior can buy there is not capped by the table:

  plain-data      plain deep MLPs (4-12 layers, no normalisation, no skips; digits-plain's
                  family) on a synthetic task of 6 classes (4,000 samples), a quarter (small)
                  and all (large) of its training split: 200 x 27 epochs; 7 parameters
  xgb22-data      xgboost with 22 parameters (cancer-xgb22's family) on a synthetic task of
                  2 classes (6,000 samples), a quarter (small) and all (large) of its training
                  split: 200 x 27 steps of 4 rounds
  wide24-data     torch MLPs with 24 parameters (digits-wide24's family) on a synthetic task
                  of 10 classes (5,000 samples, 64 inputs), a quarter (small) and all (large)
                  of its training split: 200 x 27 epochs
  plain-shift     the lesson that does not hold: plain-data's family on another synthetic
                  task of 6 classes (3,000 samples), standardised inputs (small) and inputs
                  30x as large (large, a pipeline that lost its scaling)

and the protocol's reserves, recorded only where a pair fails its checks:

  xgb22-digits-data  xgb22's family on the UCI digits (10 classes), a quarter (small) and
                  all (large) of its training split: for a pair where the lesson should hold
  xgb22-noise     xgb22's family on a synthetic task of 2 classes (4,000 samples) with clean
                  labels (small) and 40 % of them drawn at random (large): for plain-shift

Run with Debian's interpreter, one process per pair (each trains in one thread):
  /usr/bin/python3 tests/bench/quality/priors/make_fifth_pairs.py plain-data [--limit N] [--out DIR]
The tables are written to tests/bench/data/transfer-claim-5/ beside their study files.
"""
import argparse
import os
import sys

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

# The recorders whose families these pairs reuse lie one folder up (tests/bench/quality).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from make_claim_tables import train_wide24  # noqa: E402
from make_claim_tables_round2 import train_plain, train_xgb22  # noqa: E402
from make_curve_tables import DATA, record, scaled_split  # noqa: E402
from make_transfer_tables import quarter  # noqa: E402
from sklearn.datasets import load_digits, make_classification  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

FOLDER = os.path.join(DATA, "transfer-claim-5")
CONFIGURATIONS = 200


def as_tensors(split):
    """A (x_train, x_val, y_train, y_val) split of numpy arrays as torch tensors."""
    import torch
    x_train, x_val, y_train, y_val = split
    as_float = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    return as_float(x_train), as_float(x_val), torch.tensor(y_train), torch.tensor(y_val)


def sized(split, size, seed):
    """The split with its training part cut to a stratified quarter for the small size."""
    x_train, x_val, y_train, y_val = split
    if size == "small":
        x_train, y_train = quarter(x_train, y_train, seed)
    return x_train, x_val, y_train, y_val


def synthetic_tensors(size, split_seed, **task):
    """make_classification(**task), standardised and split by `split_seed`, the training
    part cut to a quarter for the small size, as torch tensors."""
    x, y = make_classification(**task)
    return as_tensors(sized(scaled_split(x, y, split_seed, stratify=y), size, split_seed))


def synthetic_trainer(train, size, split_seed, config_seed, **task):
    """A table's build: `train` (train_plain or train_wide24) on synthetic_tensors."""
    def build(writer, limit):
        train(writer, limit, synthetic_tensors(size, split_seed, **task), config_seed)
    return build


def plain_data(size):
    return synthetic_trainer(train_plain, size, 30, 20261230, n_samples=4000, n_features=32, n_informative=16,
                             n_redundant=4, n_classes=6, flip_y=0.02, class_sep=1.0, random_state=20261230)


def xgb22_data(size):
    def build(writer, limit):
        x, y = make_classification(n_samples=6000, n_features=30, n_informative=10, n_redundant=6, n_classes=2,
                                   flip_y=0.05, class_sep=0.8, random_state=20261231)
        split = train_test_split(x, y, test_size=0.3, random_state=31, stratify=y)
        train_xgb22(writer, limit, sized(split, size, 31), 20261231)
    return build


def wide24_data(size):
    return synthetic_trainer(train_wide24, size, 32, 20261232, n_samples=5000, n_features=64, n_informative=24,
                             n_redundant=8, n_classes=10, flip_y=0.02, class_sep=1.2, random_state=20261232)


def plain_shift(input_scale):
    def build(writer, limit):
        x, y = make_classification(n_samples=3000, n_features=32, n_informative=16, n_redundant=4, n_classes=6,
                                   flip_y=0.02, class_sep=1.0, random_state=20261233)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 33, stratify=y)
        split = (x_train * input_scale, x_val * input_scale, y_train, y_val)
        train_plain(writer, limit, as_tensors(split), 20261233)
    return build


def xgb22_digits_data(size):
    def build(writer, limit):
        x, y = load_digits(return_X_y=True)
        split = train_test_split(x, y, test_size=0.3, random_state=34, stratify=y)
        train_xgb22(writer, limit, sized(split, size, 34), 20261234)
    return build


def xgb22_noise(label_noise):
    """Labels drawn at random with probability `label_noise` (make_classification's
    flip_y), validation labels included: the task itself is noisier."""
    def build(writer, limit):
        x, y = make_classification(n_samples=4000, n_features=30, n_informative=10, n_redundant=6, n_classes=2,
                                   flip_y=label_noise, class_sep=0.8, random_state=20261235)
        train_xgb22(writer, limit, train_test_split(x, y, test_size=0.3, random_state=35, stratify=y), 20261235)
    return build


PAIRS = {"plain-data": (plain_data("small"), plain_data("large")),
         "xgb22-data": (xgb22_data("small"), xgb22_data("large")),
         "wide24-data": (wide24_data("small"), wide24_data("large")),
         "plain-shift": (plain_shift(1.0), plain_shift(30.0)),
         "xgb22-digits-data": (xgb22_digits_data("small"), xgb22_digits_data("large")),
         "xgb22-noise": (xgb22_noise(0.0), xgb22_noise(0.4))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", nargs="+", choices=list(PAIRS))
    parser.add_argument("--limit", type=int, default=CONFIGURATIONS, help="configurations per table")
    parser.add_argument("--out", default=FOLDER, help="the folder to write to")
    parser.add_argument("--only", choices=("small", "large"), help="record one table of each pair")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.pairs:
        small, large = PAIRS[name]
        if args.only != "large":
            record(args.out, name + "-small", small, args.limit)
        if args.only != "small":
            record(args.out, name + "-large", large, args.limit)


if __name__ == "__main__":
    main()
