#!/usr/bin/python3
"""Records the claim tables of issue #43 from real training on this machine, after the
setting they judge was fixed (doc/performance.md, "Claim tables of issue #43"): every
configuration is trained step by step and each step's validation metric and measured
wall-clock seconds are written as a long-form CSV table that `slurmtune simulate --curves`
and tests/bench/quality/hpo_quality.py read, beside a study file (tests/bench/data/NAME.toml).

  digits-torch12  torch MLPs on the UCI digits with 12 parameters (optimizer, depth,
                  width, dropout, activation, label smoothing, schedule, init scale...):
                  300 configurations x 27 epochs; val_loss
  digits-cnn      torch CNNs on the digits as 8x8 images; channels, depth, kernel and
                  batch size make one epoch cost from milliseconds to about a second (heavy
                  cost differences): 300 configurations x 27 epochs; val_loss
  wine-noisy      scikit-learn MLPs on the wine data, each configuration trained on 3
                  data seeds (another split and initialisation each), validated on 54
                  samples: noisy curves, one seed drawn per trial: 300 x 3 x 27 epochs
  digits-xgb      xgboost (Debian's python3-xgboost) on the digits, 8 boosting rounds a
                  step, 9 parameters of which 3 categorical (tree method, growth
                  policy, histogram bins): 300 configurations x 27 steps; val_loss

Configurations are drawn at random (fixed seeds) from the search spaces in the .toml
files. Run with Debian's interpreter, one process per table (each uses one thread):
  /usr/bin/python3 tests/bench/quality/make_claim_tables.py digits-cnn [--limit N] [--out DIR]
"""
import argparse
import math
import os
import time

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import numpy as np  # noqa: E402
from make_curve_tables import DATA, classifier_epoch, loguniform, progress, record, scaled_split, sig  # noqa: E402
from sklearn.datasets import load_digits, load_wine  # noqa: E402
from sklearn.metrics import log_loss  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

EPOCHS = 27


def lograndint(rng, low, high):
    """An integer in [low, high), uniform in log scale (the .toml's lograndint)."""
    return int(math.exp(rng.uniform(math.log(low), math.log(high))))


def digits_tensors(split_seed):
    import torch
    x, y = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = scaled_split(x, y, split_seed, stratify=y)
    as_float = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    return as_float(x_train), as_float(x_val), torch.tensor(y_train), torch.tensor(y_val)


def torch_optimizer(torch, c, parameters):
    if c["optimizer"] == "sgd":
        return torch.optim.SGD(parameters, lr=c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])
    if c["optimizer"] == "rmsprop":
        return torch.optim.RMSprop(parameters, lr=c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])
    return torch.optim.Adam(parameters, lr=c["lr"], betas=(c["momentum"], 0.999), weight_decay=c["weight_decay"])


def train_torch(writer, c, model, optimizer, data, epochs, scheduler=None, smoothing=0.0):
    """Trains epoch by epoch, writing (configuration, epoch, val_loss, seconds); a run whose
    loss is no longer finite ends there, as a real trial would fail."""
    import torch
    x_train, x_val, y_train, y_val = data
    generator = torch.Generator().manual_seed(0)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=smoothing)
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        model.train()
        for batch in torch.randperm(len(x_train), generator=generator).split(c["batch_size"]):
            optimizer.zero_grad()
            loss_fn(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
        if scheduler is not None:
            scheduler.step()
        model.eval()
        with torch.no_grad():
            val_loss = float(torch.nn.functional.cross_entropy(model(x_val), y_val))
        seconds = time.perf_counter() - start
        finite = math.isfinite(val_loss)
        writer.writerow([*c.values(), epoch, sig(val_loss) if finite else "nan", sig(seconds, 4)])
        if not finite:
            break


def digits_torch12(writer, limit):
    import torch
    torch.set_num_threads(1)
    data = digits_tensors(2)
    rng = np.random.default_rng(20261127)
    activations = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "gelu": torch.nn.GELU}
    header = ["lr", "weight_decay", "optimizer", "momentum", "layers", "width", "dropout", "batch_size",
              "activation", "label_smoothing", "schedule", "init_scale"]
    writer.writerow(header + ["step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"lr": sig(loguniform(rng, 1e-4, 0.3)), "weight_decay": sig(loguniform(rng, 1e-6, 0.1)),
             "optimizer": str(rng.choice(["sgd", "adam", "rmsprop"])), "momentum": sig(rng.uniform(0.0, 0.99)),
             "layers": int(rng.integers(1, 4)), "width": lograndint(rng, 16, 257),
             "dropout": sig(rng.uniform(0.0, 0.5)), "batch_size": int(rng.choice([16, 32, 64, 128, 256])),
             "activation": str(rng.choice(list(activations))), "label_smoothing": sig(rng.uniform(0.0, 0.2)),
             "schedule": str(rng.choice(["constant", "cosine"])), "init_scale": sig(loguniform(rng, 0.3, 3.0))}
        torch.manual_seed(i)
        layers, width_in = [], 64
        for _ in range(c["layers"]):
            layers += [torch.nn.Linear(width_in, c["width"]), activations[c["activation"]](),
                       torch.nn.Dropout(c["dropout"])]
            width_in = c["width"]
        model = torch.nn.Sequential(*layers, torch.nn.Linear(width_in, 10))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.mul_(c["init_scale"])
        optimizer = torch_optimizer(torch, c, model.parameters())
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, EPOCHS) if c["schedule"] == "cosine" else None
        train_torch(writer, c, model, optimizer, data, EPOCHS, scheduler, c["label_smoothing"])
        progress(i, limit)


def digits_cnn(writer, limit):
    import torch
    torch.set_num_threads(1)
    x_train, x_val, y_train, y_val = digits_tensors(3)
    data = (x_train.reshape(-1, 1, 8, 8), x_val.reshape(-1, 1, 8, 8), y_train, y_val)
    rng = np.random.default_rng(20261128)
    writer.writerow(["channels", "conv_layers", "kernel", "batch_size", "lr", "weight_decay", "momentum",
                     "step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"channels": lograndint(rng, 4, 65), "conv_layers": int(rng.integers(1, 4)),
             "kernel": int(rng.choice([3, 5])), "batch_size": int(rng.choice([8, 16, 32, 64, 128, 256, 512])),
             "lr": sig(loguniform(rng, 1e-3, 0.3)), "weight_decay": sig(loguniform(rng, 1e-6, 1e-2)),
             "momentum": sig(rng.uniform(0.5, 0.99))}
        torch.manual_seed(i)
        layers, channels_in = [], 1
        for _ in range(c["conv_layers"]):
            layers += [torch.nn.Conv2d(channels_in, c["channels"], c["kernel"], padding=c["kernel"] // 2),
                       torch.nn.ReLU()]
            channels_in = c["channels"]
        model = torch.nn.Sequential(*layers, torch.nn.Flatten(), torch.nn.Linear(channels_in * 64, 10))
        optimizer = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=c["momentum"],
                                    weight_decay=c["weight_decay"])
        train_torch(writer, c, model, optimizer, data, EPOCHS)
        progress(i, limit)


def wine_noisy(writer, limit, seeds=(0, 1, 2)):
    x, y = load_wine(return_X_y=True)
    classes = np.unique(y)
    splits = {seed: scaled_split(x, y, 100 + seed, stratify=y) for seed in seeds}
    rng = np.random.default_rng(20261129)
    writer.writerow(["lr", "alpha", "hidden", "batch_size", "solver", "momentum", "seed", "step", "val_loss",
                     "step_seconds"])
    for i in range(limit):
        c = {"lr": sig(loguniform(rng, 1e-4, 0.3)), "alpha": sig(loguniform(rng, 1e-6, 1.0)),
             "hidden": lograndint(rng, 4, 129), "batch_size": int(rng.choice([8, 16, 32, 64])),
             "solver": str(rng.choice(["adam", "sgd"])), "momentum": sig(rng.uniform(0.5, 0.99))}
        for seed in seeds:
            x_train, x_val, y_train, y_val = splits[seed]
            model = MLPClassifier(hidden_layer_sizes=(c["hidden"],), alpha=c["alpha"], batch_size=c["batch_size"],
                                  learning_rate_init=c["lr"], solver=c["solver"], momentum=c["momentum"],
                                  beta_1=c["momentum"], random_state=1000 * seed + i)
            for epoch in range(1, EPOCHS + 1):
                loss, seconds = classifier_epoch(model, x_train, x_val, y_train, y_val, classes)
                finite = math.isfinite(loss)
                writer.writerow([*c.values(), seed, epoch, sig(loss) if finite else "nan", sig(seconds, 4)])
                if not finite:
                    break
        progress(i, limit)


def digits_xgb(writer, limit, rounds_per_step=8):
    import xgboost
    x, y = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = scaled_split(x, y, 4, stratify=y)
    train, val = xgboost.DMatrix(x_train, label=y_train), xgboost.DMatrix(x_val, label=y_val)
    rng = np.random.default_rng(20261130)
    writer.writerow(["eta", "max_depth", "min_child_weight", "subsample", "colsample_bytree", "reg_lambda",
                     "tree_method", "grow_policy", "max_bin", "step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"eta": sig(loguniform(rng, 0.01, 0.5)), "max_depth": int(rng.integers(1, 11)),
             "min_child_weight": sig(loguniform(rng, 0.5, 32)), "subsample": sig(rng.uniform(0.4, 1.0)),
             "colsample_bytree": sig(rng.uniform(0.3, 1.0)), "reg_lambda": sig(loguniform(rng, 1e-3, 10)),
             "tree_method": str(rng.choice(["approx", "hist"])),
             "grow_policy": str(rng.choice(["depthwise", "lossguide"])),
             "max_bin": int(rng.choice([16, 32, 64, 128, 256]))}
        params = {**c, "objective": "multi:softprob", "num_class": 10, "eval_metric": "mlogloss", "nthread": 1,
                  "seed": i, "verbosity": 0}
        booster = None
        for step in range(1, EPOCHS + 1):
            start = time.perf_counter()
            booster = xgboost.train(params, train, num_boost_round=rounds_per_step, xgb_model=booster)
            proba = booster.predict(val)
            seconds = time.perf_counter() - start
            writer.writerow([*c.values(), step, sig(log_loss(y_val, np.clip(proba, 1e-12, 1), labels=range(10))),
                             sig(seconds, 4)])
        progress(i, limit)


TABLES = {"digits-torch12": digits_torch12, "digits-cnn": digits_cnn, "wine-noisy": wine_noisy,
          "digits-xgb": digits_xgb}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    parser.add_argument("--limit", type=int, default=300, help="configurations per table")
    parser.add_argument("--out", default=DATA)
    args = parser.parse_args()
    for name in args.tables:
        record(args.out, name, TABLES[name], args.limit)


if __name__ == "__main__":
    main()
