#!/usr/bin/python3
"""Builds the tabulated HPO benchmarks of tests/bench/quality/hpo_quality.py from real training
runs on this machine: every configuration is trained epoch by epoch, and each epoch's
validation metric and measured wall-clock seconds are written as a long-form CSV table
that `slurmtune simulate --curves` reads (doc/simulation.md).

  digits-mlp   scikit-learn MLPClassifier on the UCI digits (python3-sklearn ships
               them): 500 configurations x 27 epochs; val_loss (log loss), 5 parameters
  cancer-gbdt  GradientBoostingClassifier on the Wisconsin breast cancer data: 250
               configurations x 2 seeds x 25 steps of 8 trees; val_loss, 5 parameters
  digits-deep  two-layer MLPClassifier on the UCI digits: 240 configurations x 81 epochs
               (longer curves); val_loss, 7 parameters
  diabetes-sgd MLPRegressor trained by SGD on the diabetes data, constant or decaying
               (invscaling) step sizes, so that fast starters stall and slow ones catch
               up (curves that cross): 400 configurations x 81 epochs; val_mse, 7 parameters

digits-mlp and cancer-gbdt are the tables the model-based methods' options were chosen
on (held out); digits-deep and diabetes-sgd are the claim tables, never tuned on.

Configurations are drawn at random (fixed seed) from the search spaces in
tests/bench/data/*.toml. Run with Debian's interpreter:
  OMP_NUM_THREADS=1 /usr/bin/python3 tests/bench/quality/make_curve_tables.py [digits-mlp|cancer-gbdt] [--limit N]
"""
import argparse
import csv
import math
import os
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.preprocessing import StandardScaler

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")  # tests/bench/data


def loguniform(rng, low, high):
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def sig(x, digits=6):
    return float(f"{x:.{digits}g}")


def digits_configs(rng, n):
    for _ in range(n):
        yield {
            "lr": sig(loguniform(rng, 1e-4, 0.3)),
            "alpha": sig(loguniform(rng, 1e-6, 1.0)),
            "hidden": int(math.exp(rng.uniform(math.log(8), math.log(256)))),
            "batch_size": int(rng.choice([16, 32, 64, 128, 256])),
            "solver": str(rng.choice(["adam", "sgd"])),
        }


def scaled_split(x, y, seed, stratify=None):
    """70 % to train, 30 % to validate; inputs standardised by the training part."""
    x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.3, random_state=seed, stratify=stratify)
    scaler = StandardScaler().fit(x_train)
    return scaler.transform(x_train), scaler.transform(x_val), y_train, y_val


def digits_mlp(writer, limit, epochs=27):
    x, y = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = scaled_split(x, y, 0, stratify=y)
    classes = np.unique(y)
    rng = np.random.default_rng(20261122)
    writer.writerow(["lr", "alpha", "hidden", "batch_size", "solver", "step", "val_loss", "val_error", "step_seconds"])
    for i, c in enumerate(digits_configs(rng, limit)):
        model = MLPClassifier(hidden_layer_sizes=(c["hidden"],), alpha=c["alpha"], batch_size=c["batch_size"],
                              learning_rate_init=c["lr"], solver=c["solver"], momentum=0.9, random_state=i)
        for epoch in range(1, epochs + 1):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.partial_fit(x_train, y_train, classes=classes)
                proba = model.predict_proba(x_val)
            seconds = time.perf_counter() - start
            loss = log_loss(y_val, np.clip(proba, 1e-12, 1), labels=classes) if np.all(np.isfinite(proba)) else float("nan")
            error = float(np.mean(classes[np.argmax(proba, axis=1)] != y_val)) if np.all(np.isfinite(proba)) else float("nan")
            writer.writerow([c["lr"], c["alpha"], c["hidden"], c["batch_size"], c["solver"], epoch,
                             sig(loss), sig(error), sig(seconds, 4)])
        progress(i, limit)


def cancer_gbdt(writer, limit, steps=25, trees_per_step=8, seeds=(0, 1)):
    x, y = load_breast_cancer(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.35, random_state=0, stratify=y)
    rng = np.random.default_rng(20261123)
    writer.writerow(["learning_rate", "max_depth", "subsample", "min_samples_leaf", "max_features",
                     "seed", "step", "val_loss", "elapsed_seconds"])
    for i in range(limit):
        c = {"learning_rate": sig(loguniform(rng, 0.005, 0.5)), "max_depth": int(rng.integers(1, 9)),
             "subsample": sig(rng.uniform(0.3, 1.0)),
             "min_samples_leaf": int(math.exp(rng.uniform(0, math.log(65)))),
             "max_features": sig(rng.uniform(0.1, 1.0))}
        for seed in seeds:
            train_gbdt(writer, c, (x_train, x_val, y_train, y_val), seed, steps, trees_per_step, (seed,))
        progress(i, limit)


def train_gbdt(writer, c, data, seed, steps, trees_per_step, labels=()):
    """Gradient-boosted trees of configuration `c` (learning_rate, max_depth, subsample,
    min_samples_leaf, max_features), `trees_per_step` more each step: a row (c's values,
    `labels`, step, validation log loss, seconds since the start) per step."""
    x_train, x_val, y_train, y_val = data
    model = GradientBoostingClassifier(learning_rate=c["learning_rate"], max_depth=c["max_depth"],
                                       subsample=c["subsample"], min_samples_leaf=c["min_samples_leaf"],
                                       max_features=c["max_features"], warm_start=True, n_estimators=0,
                                       random_state=seed)
    elapsed = 0.0
    for step in range(1, steps + 1):
        start = time.perf_counter()
        model.set_params(n_estimators=step * trees_per_step)
        model.fit(x_train, y_train)
        proba = model.predict_proba(x_val)
        elapsed += time.perf_counter() - start
        writer.writerow([*c.values(), *labels, step, sig(log_loss(y_val, proba)), sig(elapsed, 5)])


def classifier_epoch(model, x_train, x_val, y_train, y_val, classes):
    """One epoch of partial_fit: (validation log loss, NaN once diverged; seconds)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.partial_fit(x_train, y_train, classes=classes)
            proba = model.predict_proba(x_val)
        except ValueError:  # diverged: scikit-learn refuses non-finite weights
            proba = np.full((len(y_val), len(classes)), np.nan)
    seconds = time.perf_counter() - start
    loss = log_loss(y_val, np.clip(proba, 1e-12, 1), labels=classes) if np.all(np.isfinite(proba)) else float("nan")
    return loss, seconds


def regressor_epoch(model, x_train, x_val, y_train, y_val):
    """One epoch of partial_fit: (validation mean squared error, NaN once diverged; seconds)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.partial_fit(x_train, y_train)
            mse = float(np.mean((model.predict(x_val) - y_val) ** 2))
        except ValueError:  # diverged: scikit-learn refuses non-finite weights
            mse = float("nan")
    return mse, time.perf_counter() - start


def write_epochs(writer, c, epoch, epochs):
    """Rows of configuration `c` for `epochs` calls of epoch() -> (loss, seconds); a diverged
    run ends at its first non-finite loss, as a real trial would fail."""
    for step in range(1, epochs + 1):
        loss, seconds = epoch()
        writer.writerow([*c.values(), step, sig(loss) if math.isfinite(loss) else "nan", sig(seconds, 4)])
        if not math.isfinite(loss):
            break


def digits_deep(writer, limit, epochs=81):
    x, y = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = scaled_split(x, y, 1, stratify=y)
    classes = np.unique(y)
    rng = np.random.default_rng(20261125)
    writer.writerow(["lr", "alpha", "hidden1", "hidden2", "batch_size", "solver", "momentum", "step",
                     "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"lr": sig(loguniform(rng, 1e-4, 0.3)), "alpha": sig(loguniform(rng, 1e-6, 1.0)),
             "hidden1": int(math.exp(rng.uniform(math.log(8), math.log(257)))),
             "hidden2": int(math.exp(rng.uniform(math.log(8), math.log(257)))),
             "batch_size": int(rng.choice([16, 32, 64, 128, 256])), "solver": str(rng.choice(["adam", "sgd"])),
             "momentum": sig(rng.uniform(0.5, 0.99))}
        model = MLPClassifier(hidden_layer_sizes=(c["hidden1"], c["hidden2"]), alpha=c["alpha"],
                              batch_size=c["batch_size"], learning_rate_init=c["lr"], solver=c["solver"],
                              momentum=c["momentum"], beta_1=c["momentum"], random_state=i)
        write_epochs(writer, c, lambda: classifier_epoch(model, x_train, x_val, y_train, y_val, classes), epochs)
        progress(i, limit)


def diabetes_sgd(writer, limit, epochs=81):
    x, y = load_diabetes(return_X_y=True)
    x_train, x_val, y_train, y_val = scaled_split(x, y, 0)
    mean, sd = y_train.mean(), y_train.std()
    y_train, y_val = (y_train - mean) / sd, (y_val - mean) / sd
    rng = np.random.default_rng(20261126)
    writer.writerow(["lr", "schedule", "power_t", "alpha", "hidden", "batch_size", "momentum", "step",
                     "val_mse", "step_seconds"])
    for i in range(limit):
        c = {"lr": sig(loguniform(rng, 1e-4, 0.1)), "schedule": str(rng.choice(["constant", "invscaling"])),
             "power_t": sig(rng.uniform(0.1, 0.9)), "alpha": sig(loguniform(rng, 1e-6, 0.1)),
             "hidden": int(math.exp(rng.uniform(math.log(4), math.log(129)))),
             "batch_size": int(rng.choice([8, 16, 32, 64])), "momentum": sig(rng.uniform(0.0, 0.99))}
        model = MLPRegressor(hidden_layer_sizes=(c["hidden"],), solver="sgd", learning_rate=c["schedule"],
                             learning_rate_init=c["lr"], power_t=c["power_t"], alpha=c["alpha"],
                             batch_size=c["batch_size"], momentum=c["momentum"], random_state=i)
        for epoch in range(1, epochs + 1):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.partial_fit(x_train, y_train)
                predicted = model.predict(x_val)
            seconds = time.perf_counter() - start
            mse = float(np.mean((predicted - y_val) ** 2)) if np.all(np.isfinite(predicted)) else float("nan")
            writer.writerow([*c.values(), epoch, sig(mse) if math.isfinite(mse) else "nan", sig(seconds, 4)])
        progress(i, limit)


def progress(i, limit):
    if (i + 1) % 25 == 0 or i + 1 == limit:
        print(f"  {i + 1}/{limit} configurations", file=sys.stderr, flush=True)


def record(out, name, build, limit):
    """Trains table NAME into OUT/NAME.csv through a temporary file, so an interrupted
    run never leaves a partial table under the final name."""
    path = os.path.join(out, name + ".csv")
    print(f"{name}: training into {path}", file=sys.stderr)
    started = time.perf_counter()
    with open(path + ".tmp", "w", newline="") as f:
        build(csv.writer(f), limit)
    os.replace(path + ".tmp", path)
    print(f"{name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)


TABLES = {"digits-mlp": (digits_mlp, 500), "cancer-gbdt": (cancer_gbdt, 250),
          "digits-deep": (digits_deep, 240), "diabetes-sgd": (diabetes_sgd, 400)}


def record_from_command_line(description, tables, out, choices=None):
    """The recorders' command line: TABLES (name: (build, size)) to record, --limit, --out."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("tables", nargs="*", default=list(tables), choices=choices)
    parser.add_argument("--limit", type=int, help="configurations per table (default: the full table)")
    parser.add_argument("--out", default=out)
    args = parser.parse_args()
    for name in args.tables:
        build, size = tables[name]
        record(args.out, name, build, args.limit or size)


def main():
    record_from_command_line(__doc__, TABLES, DATA)


if __name__ == "__main__":
    main()
