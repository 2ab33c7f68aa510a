#!/usr/bin/python3
"""Records the table pairs of issue #64 (priors from earlier studies) from real training on
this machine: each pair is one model family at two sizes, the same configurations (drawn
once, fixed seed) trained on both, so a study on the small table is the earlier study
whose lesson a study on the large table may use. Long-form CSV tables as
make_curve_tables.py writes them (`slurmtune simulate --curves` reads them), beside a
study file per table (tests/bench/data/transfer/NAME.toml).

  mlp-width   torch MLPs (2 hidden layers) on the UCI digits, 32 units a layer (small)
              and 128 (large, 4x the width): 200 configurations x 27 epochs; 6 parameters
  mlp-data    scikit-learn MLPClassifier on the UCI digits, trained on a quarter of the
              training split (small) and on all of it (large): 200 x 27 epochs; 5 parameters
  gbdt-data   GradientBoostingClassifier on a synthetic task of 6,000 samples
              (make_classification, fixed seed), a quarter (small) and all (large) of
              its training split: 200 x 25 steps of 8 trees; 5 parameters
  mlp-shift   the lesson that does not hold: scikit-learn MLPClassifier on the digits
              with standardised inputs (small) and with inputs 30x as large (large, a
              pipeline that lost its scaling), where the good learning rates and
              regularisation lie elsewhere: 200 x 27 epochs; 5 parameters
  rff-cancer-shift  a second wrong lesson, recorded after the claim pairs below were run
              and shaped after rff-shift, where the prior failed at 8 workers: softmax
              regression on 256 random Fourier features of the breast cancer data,
              standardised inputs (small) and 30x as large (large): 200 x 27 epochs

The claim pairs (tests/bench/data/transfer-claim/), recorded 2026-12-04 after the prior's
setting was fixed, shapes the tuning pairs do not cover:

  rff-width       softmax regression by SGD on random Fourier features of the digits, 256
                  features (small) and 1,024 (large, 4x the width): 200 x 27 epochs; 5 parameters
  multigrid-grid  a simulation code's solver (poisson_multigrid.py), the same anisotropic
                  problem on 129 x 129 points (small) and 513 x 513 (large, the grid refined
                  4x a side): 200 x 27 cycles; 7 parameters
  hgb-data        histogram gradient boosting (8 iterations a step) regressing a synthetic
                  task (make_friedman1, 16,000 samples), a quarter (small) and all (large)
                  of its training split: 200 x 25 steps; 5 parameters
  rff-shift       the lesson that does not hold: rff-width's small model on the digits with
                  standardised inputs (small) and with inputs 30x as large (large): the
                  kernel's good bandwidth moves down by 900x, three of its seven decades

The second claim pairs (tests/bench/data/transfer-claim-2/), recorded 2026-12-04 after the
prior's checks became its defaults:

  linear-data     SGDClassifier (log loss) on a synthetic task of 4 classes (make_classification,
                  24,000 samples), a quarter (small) and all (large) of its training split:
                  200 x 27 epochs; 5 parameters
  mlpreg-width    MLPRegressor on make_friedman1 (8,000 samples, inputs and targets
                  standardised), two hidden layers of 16 (small) and of 64 (large, 4x the
                  width): 200 x 27 epochs; 5 parameters; val_loss the validation MSE
  hgb-class-data  HistGradientBoostingClassifier (8 iterations a step) on a synthetic task of 2
                  classes (make_classification, 8,000 samples), a quarter (small) and all
                  (large) of its training split: 200 x 25 steps; 5 parameters
  mlpreg-target   the lesson that does not hold: mlpreg-width's small model with standardised
                  targets (small) and with the targets 100x as large, unscaled (large)

The third claim pairs (tests/bench/data/transfer-claim-3/), recorded 2026-12-04 after the
prior's first wave began to follow the workers:

  rf-data         RandomForestClassifier (4 trees a step) on a synthetic task of 2 classes
                  (make_classification, 4,000 samples), a quarter (small) and all (large) of
                  its training split: 200 x 25 steps; 5 parameters
  mlpreg-data     MLPRegressor, two hidden layers of 32, on make_friedman1 (8,000 samples,
                  inputs and targets standardised), a quarter (small) and all (large) of its
                  training split: 200 x 27 epochs; 5 parameters
  mlp-batch       MLPClassifier (one hidden layer) on a synthetic task of 4 classes
                  (make_classification, 6,000 samples), minibatches of 32 (small) and of 128
                  (large, 4x the batch): 200 x 27 epochs; 5 parameters
  hgb-noise       the lesson that does not hold: HistGradientBoostingClassifier (8 iterations
                  a step) on a synthetic task of 2 classes (4,000 samples) with clean labels
                  (small) and with 40 % of them drawn at random (large): 200 x 25 steps

The fourth claim pairs (tests/bench/data/transfer-claim-4/), recorded 2026-12-05 after the
prior's trust began to ask the earlier study (C20):

  cnn-width       a torch CNN (1 to 3 convolutions, SGD with momentum) on the digits as 8x8
                  images, 8 channels (small) and 32 (large, 4x the width): 200 x 27 epochs;
                  6 parameters
  charlm-width    a character language model (embedding, GRU or LSTM, read-out; 4 batches
                  a step) on Debian's license texts, 16 units wide (small) and 64 (large, 4x
                  the width): 200 x 27 steps; 10 parameters
  mlp-depth       MLPClassifier on a synthetic task of 4 classes (6,000 samples), one hidden
                  layer (small) and three of the same width (large, 3x as deep): 200 x 27
                  epochs; 6 parameters
  mlp-big-batch   the lesson that does not hold: MLPClassifier (one hidden layer) on
                  another synthetic task of 4 classes, minibatches of 16 (small) and of 1,024
                  (large, 64x the batch, as a run scaled out without retuning)
  cnn-data, cnn-shift  the reserves of the protocol's reachability check, recorded only
                  if a pair fails it: cnn-width's CNN with 16 channels on a quarter (small)
                  and all (large) of the training split; the same with standardised inputs
                  (small) and inputs 30x as large (large)

Run with Debian's interpreter, one process per pair (each trains in one thread):
  /usr/bin/python3 tests/bench/quality/make_transfer_tables.py mlp-width [--limit N] [--out DIR]
"""
import argparse
import math
import os
import time

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import numpy as np  # noqa: E402
from make_claim_tables import (digits_tensors, license_corpus, lograndint, torch_optimizer,  # noqa: E402
                               train_charlm, train_multigrid, train_rff, train_torch, validation_windows)
from make_curve_tables import (DATA, classifier_epoch, loguniform, progress, record,  # noqa: E402
                               regressor_epoch, scaled_split, sig, train_gbdt, write_epochs)
from sklearn.datasets import load_breast_cancer, load_digits, make_classification, make_friedman1  # noqa: E402
from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier)
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.metrics import log_loss  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402

EPOCHS = 27
CONFIGURATIONS = 200


def quarter(x, y, seed):
    """A stratified quarter of (x, y): the small size's training data."""
    x_part, _, y_part, _ = train_test_split(x, y, train_size=0.25, random_state=seed, stratify=y)
    return x_part, y_part


def width_configs(limit):
    rng = np.random.default_rng(20261201)
    return [{"lr": sig(loguniform(rng, 1e-4, 0.3)), "weight_decay": sig(loguniform(rng, 1e-6, 0.1)),
             "optimizer": str(rng.choice(["sgd", "adam"])), "momentum": sig(rng.uniform(0.0, 0.99)),
             "dropout": sig(rng.uniform(0.0, 0.5)), "batch_size": int(rng.choice([16, 32, 64, 128, 256]))}
            for _ in range(limit)]


def mlp_width(units):
    def build(writer, limit):
        import torch
        torch.set_num_threads(1)
        data = digits_tensors(3)
        writer.writerow(list(width_configs(1)[0]) + ["step", "val_loss", "step_seconds"])
        for i, c in enumerate(width_configs(limit)):
            torch.manual_seed(i)
            model = torch.nn.Sequential(
                torch.nn.Linear(64, units), torch.nn.ReLU(), torch.nn.Dropout(c["dropout"]),
                torch.nn.Linear(units, units), torch.nn.ReLU(), torch.nn.Dropout(c["dropout"]),
                torch.nn.Linear(units, 10))
            train_torch(writer, c, model, torch_optimizer(torch, c, model.parameters()), data, EPOCHS)
            progress(i, limit)
    return build


def mlp_configs(limit, seed):
    rng = np.random.default_rng(seed)
    return [{"lr": sig(loguniform(rng, 1e-4, 0.3)), "alpha": sig(loguniform(rng, 1e-6, 10.0)),
             "hidden": int(math.exp(rng.uniform(math.log(8), math.log(257)))),
             "batch_size": int(rng.choice([16, 32, 64, 128, 256])), "solver": str(rng.choice(["adam", "sgd"]))}
            for _ in range(limit)]


def train_mlp(writer, configs, x_train, x_val, y_train, y_val):
    classes = np.unique(y_val)
    writer.writerow(list(configs[0]) + ["step", "val_loss", "step_seconds"])
    for i, c in enumerate(configs):
        model = MLPClassifier(hidden_layer_sizes=(c["hidden"],), alpha=c["alpha"], batch_size=c["batch_size"],
                              learning_rate_init=c["lr"], solver=c["solver"], momentum=0.9, random_state=i)
        write_epochs(writer, c, lambda: classifier_epoch(model, x_train, x_val, y_train, y_val, classes), EPOCHS)
        progress(i, len(configs))


def mlp_data(size):
    def build(writer, limit):
        x, y = load_digits(return_X_y=True)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 4, stratify=y)
        if size == "small":
            x_train, y_train = quarter(x_train, y_train, 4)
        train_mlp(writer, mlp_configs(limit, 20261202), x_train, x_val, y_train, y_val)
    return build


def mlp_shift(size):
    def build(writer, limit):
        x, y = load_digits(return_X_y=True)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 5, stratify=y)
        if size == "large":  # a pipeline without the scaling: inputs 30x as large
            x_train, x_val = x_train * 30, x_val * 30
        train_mlp(writer, mlp_configs(limit, 20261204), x_train, x_val, y_train, y_val)
    return build


def gbdt_data(size, steps=25, trees_per_step=8):
    def build(writer, limit):
        x, y = make_classification(n_samples=6000, n_features=20, n_informative=8, n_redundant=4,
                                   flip_y=0.05, class_sep=0.8, random_state=20261203)
        x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        if size == "small":
            x_train, y_train = quarter(x_train, y_train, 0)
        rng = np.random.default_rng(20261203)
        writer.writerow(["learning_rate", "max_depth", "subsample", "min_samples_leaf", "max_features",
                         "step", "val_loss", "elapsed_seconds"])
        for i in range(limit):
            c = {"learning_rate": sig(loguniform(rng, 0.005, 0.5)), "max_depth": int(rng.integers(1, 9)),
                 "subsample": sig(rng.uniform(0.3, 1.0)),
                 "min_samples_leaf": int(math.exp(rng.uniform(0, math.log(129)))),
                 "max_features": sig(rng.uniform(0.1, 1.0))}
            train_gbdt(writer, c, (x_train, x_val, y_train, y_val), i, steps, trees_per_step)
            progress(i, limit)
    return build


def rff_configs(limit, seed=20261206):
    rng = np.random.default_rng(seed)
    return [{"gamma": sig(loguniform(rng, 1e-5, 100.0)), "lr": sig(loguniform(rng, 1e-3, 1000.0)),
             "weight_decay": sig(loguniform(rng, 1e-8, 1.0)), "batch_size": int(rng.choice([16, 32, 64, 128])),
             "momentum": sig(rng.uniform(0.0, 0.95))} for _ in range(limit)]


def rff(features, input_scale=1.0):
    def build(writer, limit):
        import torch
        torch.set_num_threads(1)
        x_train, x_val, y_train, y_val = digits_tensors(6)
        data = (x_train * input_scale, x_val * input_scale, y_train, y_val)
        configs = rff_configs(limit)
        writer.writerow(list(configs[0]) + ["step", "val_loss", "step_seconds"])
        for i, c in enumerate(configs):
            torch.manual_seed(i)
            train_rff(writer, c, features, data)
            progress(i, limit)
    return build


def rff_cancer(input_scale):
    """rff-width's small model on the breast cancer data (30 inputs, 2 classes): a tuning
    pair shaped after the claim pair rff-shift, recorded after that pair was run."""
    def build(writer, limit):
        import torch
        torch.set_num_threads(1)
        x, y = load_breast_cancer(return_X_y=True)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 7, stratify=y)
        as_float = lambda a: torch.tensor(a * input_scale, dtype=torch.float32)  # noqa: E731
        data = (as_float(x_train), as_float(x_val), torch.tensor(y_train), torch.tensor(y_val))
        configs = rff_configs(limit, seed=20261209)
        writer.writerow(list(configs[0]) + ["step", "val_loss", "step_seconds"])
        for i, c in enumerate(configs):
            torch.manual_seed(i)
            train_rff(writer, c, 256, data, classes=2)
            progress(i, limit)
    return build


def multigrid(n):
    def build(writer, limit):
        from poisson_multigrid import Problem
        train_multigrid(writer, limit, Problem(n=n), 20261207)
    return build


def train_hgb(writer, limit, model_class, loss, data, seed, steps=25, iterations_per_step=8):
    """Histogram gradient boosting grown `iterations_per_step` iterations a step: each of
    `limit` configurations drawn from `seed`, `loss(model, x_val, y_val)` after each step."""
    x_train, x_val, y_train, y_val = data
    rng = np.random.default_rng(seed)
    writer.writerow(["learning_rate", "max_leaf_nodes", "min_samples_leaf", "l2_regularization", "max_bins",
                     "step", "val_loss", "elapsed_seconds"])
    for i in range(limit):
        c = {"learning_rate": sig(loguniform(rng, 0.005, 1.0)), "max_leaf_nodes": lograndint(rng, 2, 257),
             "min_samples_leaf": lograndint(rng, 1, 513), "l2_regularization": sig(loguniform(rng, 1e-6, 100.0)),
             "max_bins": int(rng.integers(8, 256))}
        model = model_class(learning_rate=c["learning_rate"], max_leaf_nodes=c["max_leaf_nodes"],
                            min_samples_leaf=c["min_samples_leaf"], l2_regularization=c["l2_regularization"],
                            max_bins=c["max_bins"], early_stopping=False, warm_start=True, random_state=i)
        elapsed = 0.0
        for step in range(1, steps + 1):
            start = time.perf_counter()
            model.set_params(max_iter=step * iterations_per_step)
            model.fit(x_train, y_train)
            value = loss(model, x_val, y_val)
            elapsed += time.perf_counter() - start
            writer.writerow([*c.values(), step, sig(value), sig(elapsed, 5)])
        progress(i, limit)


def hgb_data(size):
    def build(writer, limit):
        x, y = make_friedman1(n_samples=16000, n_features=10, noise=1.0, random_state=20261208)
        x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.25, random_state=0)
        if size == "small":
            x_train, _, y_train, _ = train_test_split(x_train, y_train, train_size=0.25, random_state=0)
        mse = lambda model, x, y: float(np.mean((model.predict(x) - y) ** 2))  # noqa: E731
        train_hgb(writer, limit, HistGradientBoostingRegressor, mse, (x_train, x_val, y_train, y_val), 20261208)
    return build


def linear_data(size):
    def build(writer, limit):
        x, y = make_classification(n_samples=24000, n_features=40, n_informative=12, n_redundant=6,
                                   n_classes=4, flip_y=0.05, class_sep=0.7, random_state=20261210)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 10, stratify=y)
        if size == "small":
            x_train, y_train = quarter(x_train, y_train, 10)
        classes = np.unique(y)
        rng = np.random.default_rng(20261210)
        writer.writerow(["alpha", "eta0", "learning_rate", "penalty", "l1_ratio", "step", "val_loss", "step_seconds"])
        for i in range(limit):
            c = {"alpha": sig(loguniform(rng, 1e-7, 0.1)), "eta0": sig(loguniform(rng, 1e-4, 1.0)),
                 "learning_rate": str(rng.choice(["constant", "invscaling", "adaptive"])),
                 "penalty": str(rng.choice(["l2", "l1", "elasticnet"])), "l1_ratio": sig(rng.uniform(0.0, 1.0))}
            model = SGDClassifier(loss="log_loss", alpha=c["alpha"], eta0=c["eta0"], learning_rate=c["learning_rate"],
                                  penalty=c["penalty"], l1_ratio=c["l1_ratio"], random_state=i)
            write_epochs(writer, c, lambda: classifier_epoch(model, x_train, x_val, y_train, y_val, classes), EPOCHS)
            progress(i, limit)
    return build


def train_mlpreg(writer, limit, units, seed, data):
    """MLPRegressor with two hidden layers of `units`: each of `limit` configurations drawn
    from `seed`, the validation MSE after each epoch."""
    x_train, x_val, y_train, y_val = data
    rng = np.random.default_rng(seed)
    writer.writerow(["lr", "alpha", "batch_size", "solver", "activation", "step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"lr": sig(loguniform(rng, 1e-4, 0.3)), "alpha": sig(loguniform(rng, 1e-6, 10.0)),
             "batch_size": int(rng.choice([16, 32, 64, 128, 256])), "solver": str(rng.choice(["adam", "sgd"])),
             "activation": str(rng.choice(["relu", "tanh"]))}
        model = MLPRegressor(hidden_layer_sizes=(units, units), alpha=c["alpha"], batch_size=c["batch_size"],
                             learning_rate_init=c["lr"], solver=c["solver"], activation=c["activation"],
                             momentum=0.9, random_state=i)
        write_epochs(writer, c, lambda: regressor_epoch(model, x_train, x_val, y_train, y_val), EPOCHS)
        progress(i, limit)


def mlpreg(units, target_scale=1.0):
    """MLPRegressor on make_friedman1, inputs and targets standardised by the training part;
    target_scale: the large table of mlpreg-target, whose targets lost their scaling."""
    def build(writer, limit):
        x, y = make_friedman1(n_samples=8000, n_features=10, noise=1.0, random_state=20261211)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 11)
        mean, spread = y_train.mean(), y_train.std()
        y_train, y_val = (y_train - mean) / spread * target_scale, (y_val - mean) / spread * target_scale
        train_mlpreg(writer, limit, units, 20261211, (x_train, x_val, y_train, y_val))
    return build


def hgb_class_data(size):
    def build(writer, limit):
        x, y = make_classification(n_samples=8000, n_features=30, n_informative=10, n_redundant=5,
                                   n_classes=2, flip_y=0.05, class_sep=0.8, random_state=20261212)
        x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        if size == "small":
            x_train, y_train = quarter(x_train, y_train, 12)
        loss = lambda model, x, y: log_loss(y, np.clip(model.predict_proba(x), 1e-12, 1),  # noqa: E731
                                            labels=model.classes_)
        train_hgb(writer, limit, HistGradientBoostingClassifier, loss, (x_train, x_val, y_train, y_val), 20261212)
    return build


def rf_data(size, steps=25, trees_per_step=4):
    def build(writer, limit):
        x, y = make_classification(n_samples=4000, n_features=20, n_informative=8, n_redundant=4,
                                   n_classes=2, flip_y=0.05, class_sep=0.8, random_state=20261213)
        x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        if size == "small":
            x_train, y_train = quarter(x_train, y_train, 13)
        rng = np.random.default_rng(20261213)
        writer.writerow(["max_depth", "min_samples_leaf", "max_features", "criterion", "bootstrap",
                         "step", "val_loss", "elapsed_seconds"])
        for i in range(limit):
            c = {"max_depth": lograndint(rng, 2, 65), "min_samples_leaf": lograndint(rng, 1, 129),
                 "max_features": sig(rng.uniform(0.05, 1.0)), "criterion": str(rng.choice(["gini", "entropy"])),
                 "bootstrap": str(rng.choice(["yes", "no"]))}
            model = RandomForestClassifier(max_depth=c["max_depth"], min_samples_leaf=c["min_samples_leaf"],
                                           max_features=c["max_features"], criterion=c["criterion"],
                                           bootstrap=c["bootstrap"] == "yes", warm_start=True, random_state=i)
            elapsed = 0.0
            for step in range(1, steps + 1):
                start = time.perf_counter()
                model.set_params(n_estimators=step * trees_per_step)
                model.fit(x_train, y_train)
                value = log_loss(y_val, np.clip(model.predict_proba(x_val), 1e-12, 1), labels=model.classes_)
                elapsed += time.perf_counter() - start
                writer.writerow([*c.values(), step, sig(value), sig(elapsed, 5)])
            progress(i, limit)
    return build


def mlpreg_data(size):
    """MLPRegressor (two hidden layers of 32) on make_friedman1, a quarter or all of the
    training split."""
    def build(writer, limit):
        x, y = make_friedman1(n_samples=8000, n_features=10, noise=1.0, random_state=20261214)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 14)
        mean, spread = y_train.mean(), y_train.std()
        y_train, y_val = (y_train - mean) / spread, (y_val - mean) / spread
        if size == "small":
            x_train, _, y_train, _ = train_test_split(x_train, y_train, train_size=0.25, random_state=14)
        train_mlpreg(writer, limit, 32, 20261214, (x_train, x_val, y_train, y_val))
    return build


def mlp_batch(batch_size):
    """MLPClassifier on a synthetic task of 4 classes, every configuration with minibatches
    of `batch_size`."""
    def build(writer, limit):
        train_fixed_batch_mlp(writer, limit, synthetic_classes(20261215, split_seed=15), 20261215, batch_size,
                              lr_high=0.3)
    return build


def train_fixed_batch_mlp(writer, limit, data, seed, batch_size, lr_high):
    """`limit` MLPClassifiers (one hidden layer) drawn with `seed`, learning rates up to
    `lr_high`, each trained on `data` with minibatches of `batch_size`."""
    x_train, x_val, y_train, y_val = data
    classes = np.unique(y_train)
    rng = np.random.default_rng(seed)
    writer.writerow(["lr", "alpha", "hidden", "solver", "activation", "step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"lr": sig(loguniform(rng, 1e-4, lr_high)), "alpha": sig(loguniform(rng, 1e-6, 10.0)),
             "hidden": lograndint(rng, 8, 257), "solver": str(rng.choice(["adam", "sgd"])),
             "activation": str(rng.choice(["relu", "tanh"]))}
        model = MLPClassifier(hidden_layer_sizes=(c["hidden"],), alpha=c["alpha"], batch_size=batch_size,
                              learning_rate_init=c["lr"], solver=c["solver"], activation=c["activation"],
                              momentum=0.9, random_state=i)
        write_epochs(writer, c, lambda: classifier_epoch(model, x_train, x_val, y_train, y_val, classes), EPOCHS)
        progress(i, limit)


def hgb_noise(label_noise):
    """HistGradientBoostingClassifier on a synthetic task of 2 classes whose labels are drawn
    at random with probability `label_noise` (make_classification's flip_y), validation
    labels included: the task itself is noisier."""
    def build(writer, limit):
        x, y = make_classification(n_samples=4000, n_features=20, n_informative=8, n_redundant=4,
                                   n_classes=2, flip_y=label_noise, class_sep=0.8, random_state=20261216)
        x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
        loss = lambda model, x, y: log_loss(y, np.clip(model.predict_proba(x), 1e-12, 1),  # noqa: E731
                                            labels=model.classes_)
        train_hgb(writer, limit, HistGradientBoostingClassifier, loss, (x_train, x_val, y_train, y_val), 20261216)
    return build


def cnn_configs(limit):
    rng = np.random.default_rng(20261217)
    return [{"conv_layers": int(rng.integers(1, 4)), "kernel": int(rng.choice([3, 5])),
             "batch_size": int(rng.choice([16, 32, 64, 128, 256])), "lr": sig(loguniform(rng, 1e-3, 1.0)),
             "weight_decay": sig(loguniform(rng, 1e-6, 1e-2)), "momentum": sig(rng.uniform(0.0, 0.99))}
            for _ in range(limit)]


def cnn(channels, share=1.0, input_scale=1.0):
    """A torch CNN on the UCI digits as 8x8 images: 1 to 3 convolutions of `channels`
    channels and a linear read-out, trained by SGD with momentum on `share` of the training
    split (stratified), its inputs `input_scale` times as large as standardised."""
    def build(writer, limit):
        import torch
        torch.set_num_threads(1)
        x, y = load_digits(return_X_y=True)
        x_train, x_val, y_train, y_val = scaled_split(x, y, 6, stratify=y)
        if share < 1.0:
            x_train, _, y_train, _ = train_test_split(x_train, y_train, train_size=share, random_state=6,
                                                      stratify=y_train)
        images = lambda a: torch.tensor(a * input_scale, dtype=torch.float32).reshape(-1, 1, 8, 8)  # noqa: E731
        data = (images(x_train), images(x_val), torch.tensor(y_train), torch.tensor(y_val))
        configs = cnn_configs(limit)
        writer.writerow(list(configs[0]) + ["step", "val_loss", "step_seconds"])
        for i, c in enumerate(configs):
            torch.manual_seed(i)
            layers, channels_in = [], 1
            for _ in range(c["conv_layers"]):
                layers += [torch.nn.Conv2d(channels_in, channels, c["kernel"], padding=c["kernel"] // 2),
                           torch.nn.ReLU()]
                channels_in = channels
            model = torch.nn.Sequential(*layers, torch.nn.Flatten(), torch.nn.Linear(channels_in * 64, 10))
            optimizer = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=c["momentum"],
                                        weight_decay=c["weight_decay"])
            train_torch(writer, c, model, optimizer, data, EPOCHS)
            progress(i, limit)
    return build


def charlm_width(hidden, batches_per_step=4):
    """A character language model (an embedding, a GRU or LSTM of 1 or 2 layers, a linear
    read-out) on Debian's license texts, its recurrent layers `hidden` units wide; 10
    parameters."""
    def build(writer, limit):
        import torch
        torch.set_num_threads(1)
        train, val, vocabulary = license_corpus(torch)
        corpus = (train, validation_windows(torch, val), vocabulary)
        rng = np.random.default_rng(20261218)
        writer.writerow(["cell", "layers", "embedding", "optimizer", "lr", "momentum", "seq_len", "batch_size",
                         "dropout", "grad_clip", "step", "val_loss", "step_seconds"])
        for i in range(limit):
            c = {"cell": str(rng.choice(["gru", "lstm"])), "layers": int(rng.integers(1, 3)),
                 "embedding": lograndint(rng, 8, 33), "optimizer": str(rng.choice(["sgd", "adam", "rmsprop"])),
                 "lr": sig(loguniform(rng, 1e-4, 1.0)), "momentum": sig(rng.uniform(0.0, 0.99)),
                 "seq_len": int(rng.choice([16, 32])), "batch_size": int(rng.choice([8, 16, 32])),
                 "dropout": sig(rng.uniform(0.0, 0.5)), "grad_clip": sig(loguniform(rng, 0.1, 10.0))}
            train_charlm(torch, writer, c, i, corpus, hidden, batches_per_step)
            progress(i, limit)
    return build


def synthetic_classes(seed, split_seed=None):
    """A synthetic task of 4 classes (6,000 samples), split (by `split_seed`, or seed's last
    three digits) and standardised."""
    x, y = make_classification(n_samples=6000, n_features=20, n_informative=10, n_redundant=4,
                               n_classes=4, flip_y=0.03, class_sep=1.0, random_state=seed)
    return scaled_split(x, y, seed % 1000 if split_seed is None else split_seed, stratify=y)


def mlp_depth(layers):
    """MLPClassifier on a synthetic task of 4 classes with `layers` hidden layers of the
    configuration's width (one, and three: the net 3x as deep)."""
    def build(writer, limit):
        x_train, x_val, y_train, y_val = synthetic_classes(20261219)
        classes = np.unique(y_train)
        rng = np.random.default_rng(20261219)
        writer.writerow(["lr", "alpha", "hidden", "batch_size", "solver", "activation", "step", "val_loss",
                         "step_seconds"])
        for i in range(limit):
            c = {"lr": sig(loguniform(rng, 1e-4, 0.3)), "alpha": sig(loguniform(rng, 1e-6, 10.0)),
                 "hidden": lograndint(rng, 8, 129), "batch_size": int(rng.choice([32, 64, 128, 256])),
                 "solver": str(rng.choice(["adam", "sgd"])), "activation": str(rng.choice(["relu", "tanh"]))}
            model = MLPClassifier(hidden_layer_sizes=(c["hidden"],) * layers, alpha=c["alpha"],
                                  batch_size=c["batch_size"], learning_rate_init=c["lr"], solver=c["solver"],
                                  activation=c["activation"], momentum=0.9, random_state=i)
            write_epochs(writer, c, lambda: classifier_epoch(model, x_train, x_val, y_train, y_val, classes), EPOCHS)
            progress(i, limit)
    return build


def mlp_big_batch(batch_size):
    """MLPClassifier (one hidden layer) on a synthetic task of 4 classes, every configuration
    with minibatches of `batch_size`: 16 (small), and 1,024 (large, 64x the batch, as when a
    run scales out to many GPUs without retuning: a few updates an epoch, so the good
    learning rates move up)."""
    def build(writer, limit):
        train_fixed_batch_mlp(writer, limit, synthetic_classes(20261220), 20261220, batch_size, lr_high=1.0)
    return build


TUNING = os.path.join(DATA, "transfer")
CLAIM = os.path.join(DATA, "transfer-claim")
CLAIM_2 = os.path.join(DATA, "transfer-claim-2")
CLAIM_3 = os.path.join(DATA, "transfer-claim-3")
CLAIM_4 = os.path.join(DATA, "transfer-claim-4")
PAIRS = {"mlp-width": (TUNING, mlp_width(32), mlp_width(128)),
         "mlp-data": (TUNING, mlp_data("small"), mlp_data("large")),
         "gbdt-data": (TUNING, gbdt_data("small"), gbdt_data("large")),
         "mlp-shift": (TUNING, mlp_shift("small"), mlp_shift("large")),
         "rff-cancer-shift": (TUNING, rff_cancer(1.0), rff_cancer(30.0)),
         "rff-width": (CLAIM, rff(256), rff(1024)),
         "multigrid-grid": (CLAIM, multigrid(129), multigrid(513)),
         "hgb-data": (CLAIM, hgb_data("small"), hgb_data("large")),
         "rff-shift": (CLAIM, rff(256), rff(256, input_scale=30.0)),
         "linear-data": (CLAIM_2, linear_data("small"), linear_data("large")),
         "mlpreg-width": (CLAIM_2, mlpreg(16), mlpreg(64)),
         "hgb-class-data": (CLAIM_2, hgb_class_data("small"), hgb_class_data("large")),
         "mlpreg-target": (CLAIM_2, mlpreg(16), mlpreg(16, target_scale=100.0)),
         "rf-data": (CLAIM_3, rf_data("small"), rf_data("large")),
         "mlpreg-data": (CLAIM_3, mlpreg_data("small"), mlpreg_data("large")),
         "mlp-batch": (CLAIM_3, mlp_batch(32), mlp_batch(128)),
         "hgb-noise": (CLAIM_3, hgb_noise(0.0), hgb_noise(0.4)),
         "cnn-width": (CLAIM_4, cnn(8), cnn(32)),
         "charlm-width": (CLAIM_4, charlm_width(16), charlm_width(64)),
         "mlp-depth": (CLAIM_4, mlp_depth(1), mlp_depth(3)),
         "mlp-big-batch": (CLAIM_4, mlp_big_batch(16), mlp_big_batch(1024)),
         "cnn-data": (CLAIM_4, cnn(16, share=0.25), cnn(16)),
         "cnn-shift": (CLAIM_4, cnn(16), cnn(16, input_scale=30.0))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", nargs="+", choices=list(PAIRS))
    parser.add_argument("--limit", type=int, default=CONFIGURATIONS, help="configurations per table")
    parser.add_argument("--out", help="the folder to write to (default: the pair's, transfer/ or transfer-claim/)")
    args = parser.parse_args()
    for name in args.pairs:
        folder, small, large = PAIRS[name]
        record(args.out or folder, name + "-small", small, args.limit)
        record(args.out or folder, name + "-large", large, args.limit)


if __name__ == "__main__":
    main()
