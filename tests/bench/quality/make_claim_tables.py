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


def write_step(writer, values, step, value, seconds):
    """One row of a table: the configuration's `values`, the step, its metric and seconds.
    False when the metric is no longer finite: the run ends there, as a real trial fails."""
    finite = math.isfinite(value)
    writer.writerow([*values, step, sig(value) if finite else "nan", sig(seconds, 4)])
    return finite


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
        if not write_step(writer, c.values(), epoch, val_loss, seconds):
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
                if not write_step(writer, [*c.values(), seed], epoch, loss, seconds):
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


# Issue #64, item 4: four claim tables of shapes the earlier eight do not cover, recorded
# after the setting they judge was fixed (doc/performance/search-quality.md, "Claim tables
# of issue #64").
LICENSE_TEXTS = ("GPL-3", "GPL-2", "LGPL-2.1", "LGPL-3", "Apache-2.0", "MPL-2.0", "Artistic", "GFDL-1.3")
BATCHES_PER_STEP = 8


def license_corpus(torch, folder="/usr/share/common-licenses"):
    """Debian's license texts (base-files ships them on every Debian machine) as character
    ids: each text's first 90 % to train on, its last 10 % to validate on."""
    texts = [open(os.path.join(folder, name), encoding="utf-8", errors="replace").read() for name in LICENSE_TEXTS]
    alphabet = {ch: i for i, ch in enumerate(sorted(set("".join(texts))))}
    encode = lambda text: torch.tensor([alphabet[ch] for ch in text], dtype=torch.long)  # noqa: E731
    train = torch.cat([encode(t[: int(0.9 * len(t))]) for t in texts])
    val = torch.cat([encode(t[int(0.9 * len(t)):]) for t in texts])
    return train, val, len(alphabet)


class CharModel:
    """An embedding, a GRU or LSTM of 1 or 2 layers, and a linear read-out."""

    def __init__(self, torch, c, vocabulary, hidden):
        rnn = torch.nn.GRU if c["cell"] == "gru" else torch.nn.LSTM
        self.embedding = torch.nn.Embedding(vocabulary, c["embedding"])
        self.rnn = rnn(c["embedding"], hidden, num_layers=c["layers"], batch_first=True,
                       dropout=c["dropout"] if c["layers"] > 1 else 0.0)
        self.dropout = torch.nn.Dropout(c["dropout"])
        self.head = torch.nn.Linear(hidden, vocabulary)
        self.modules = torch.nn.ModuleList([self.embedding, self.rnn, self.dropout, self.head])

    def __call__(self, ids):
        out, _ = self.rnn(self.embedding(ids))
        return self.head(self.dropout(out))


def validation_windows(torch, val, length=128, windows=16):
    """`windows` windows of `length` + 1 characters spread over the held-out text: what one
    step validates on."""
    starts = torch.linspace(0, len(val) - length - 1, windows).long()
    return val[starts.view(-1, 1) + torch.arange(length + 1)]


def train_charlm(torch, writer, c, i, corpus, hidden, batches_per_step=BATCHES_PER_STEP):
    """Trains configuration `c` (the i-th) of a character model `hidden` units wide on
    `corpus` (train ids, validation windows, vocabulary): `batches_per_step` random windows
    of the training text a step, then the validation windows' loss; a run whose loss is no
    longer finite ends there."""
    train, val_batch, vocabulary = corpus
    c["weight_decay"] = 0.0
    torch.manual_seed(i)
    model = CharModel(torch, c, vocabulary, hidden)
    optimizer = torch_optimizer(torch, c, model.modules.parameters())
    del c["weight_decay"]
    generator = torch.Generator().manual_seed(i)
    span = torch.arange(c["seq_len"] + 1)
    loss_fn = torch.nn.CrossEntropyLoss()
    for step in range(1, EPOCHS + 1):
        start = time.perf_counter()
        model.modules.train()
        for _ in range(batches_per_step):
            offsets = torch.randint(0, len(train) - c["seq_len"] - 1, (c["batch_size"], 1), generator=generator)
            window = train[offsets + span]
            optimizer.zero_grad()
            logits = model(window[:, :-1])
            loss_fn(logits.reshape(-1, vocabulary), window[:, 1:].reshape(-1)).backward()
            torch.nn.utils.clip_grad_norm_(model.modules.parameters(), c["grad_clip"])
            optimizer.step()
        model.modules.eval()
        with torch.no_grad():
            logits = model(val_batch[:, :-1])
            val_loss = float(loss_fn(logits.reshape(-1, vocabulary), val_batch[:, 1:].reshape(-1)))
        seconds = time.perf_counter() - start
        if not write_step(writer, c.values(), step, val_loss, seconds):
            break


def licenses_charlm(writer, limit):
    import torch
    torch.set_num_threads(1)
    train, val, vocabulary = license_corpus(torch)
    corpus = (train, validation_windows(torch, val), vocabulary)
    rng = np.random.default_rng(20261202)
    header = ["cell", "layers", "hidden", "embedding", "optimizer", "lr", "momentum", "seq_len", "batch_size",
              "dropout", "grad_clip"]
    writer.writerow(header + ["step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = {"cell": str(rng.choice(["gru", "lstm"])), "layers": int(rng.integers(1, 3)),
             "hidden": lograndint(rng, 16, 129), "embedding": lograndint(rng, 8, 33),
             "optimizer": str(rng.choice(["sgd", "adam", "rmsprop"])), "lr": sig(loguniform(rng, 1e-4, 1.0)),
             "momentum": sig(rng.uniform(0.0, 0.99)), "seq_len": int(rng.choice([16, 32, 64])),
             "batch_size": int(rng.choice([8, 16, 32])), "dropout": sig(rng.uniform(0.0, 0.5)),
             "grad_clip": sig(loguniform(rng, 0.1, 10.0))}
        train_charlm(torch, writer, c, i, corpus, c["hidden"])
        progress(i, limit)


def digits_rff(writer, limit):
    """Softmax regression on random Fourier features of the digits: the kernel's bandwidth,
    the step size and the penalty each have a good band of about two decades in spaces of
    six to eight, so the good region is a few per cent of the space."""
    import torch
    torch.set_num_threads(1)
    x_train, x_val, y_train, y_val = digits_tensors(5)
    rng = np.random.default_rng(20261203)
    writer.writerow(["gamma", "lr", "weight_decay", "features", "batch_size", "momentum", "step", "val_loss",
                     "step_seconds"])
    for i in range(limit):
        c = {"gamma": sig(loguniform(rng, 1e-5, 100.0)), "lr": sig(loguniform(rng, 1e-3, 1000.0)),
             "weight_decay": sig(loguniform(rng, 1e-8, 1.0)), "features": int(rng.choice([256, 512, 1024, 2048])),
             "batch_size": int(rng.choice([16, 32, 64, 128])), "momentum": sig(rng.uniform(0.0, 0.95))}
        torch.manual_seed(i)
        train_rff(writer, c, c["features"], (x_train, x_val, y_train, y_val))
        progress(i, limit)


def train_rff(writer, c, features, data, classes=10):
    """Softmax regression by SGD (c's lr, momentum, weight_decay) over `classes` classes on
    `features` random Fourier features of bandwidth c["gamma"], drawn from torch's
    generator as seeded."""
    import torch
    x_train, x_val, y_train, y_val = data
    weights = torch.randn(x_train.shape[1], features) * math.sqrt(2 * c["gamma"])
    phases = torch.rand(features) * 2 * math.pi
    scale = math.sqrt(2.0 / features)
    mapped = lambda x: scale * torch.cos(x @ weights + phases)  # noqa: E731
    model = torch.nn.Linear(features, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=c["momentum"],
                                weight_decay=c["weight_decay"])
    train_torch(writer, c, model, optimizer, (mapped(x_train), mapped(x_val), y_train, y_val), EPOCHS)


WIDE_ACTIVATIONS = ("relu", "tanh", "gelu", "silu")


def wide_config(rng):
    c = {"layers": int(rng.integers(1, 4))}
    for layer in (1, 2, 3):
        c[f"width{layer}"] = lograndint(rng, 16, 257)
        c[f"dropout{layer}"] = sig(rng.uniform(0.0, 0.5))
        c[f"activation{layer}"] = str(rng.choice(WIDE_ACTIVATIONS))
    c.update({"optimizer": str(rng.choice(["sgd", "adam", "adamw", "rmsprop"])),
              "lr": sig(loguniform(rng, 1e-4, 0.3)), "momentum": sig(rng.uniform(0.0, 0.99)),
              "beta2": sig(rng.uniform(0.9, 0.9999)), "eps": sig(loguniform(rng, 1e-9, 1e-4)),
              "weight_decay": sig(loguniform(rng, 1e-7, 0.1)),
              "batch_size": int(rng.choice([16, 32, 64, 128, 256])),
              "label_smoothing": sig(rng.uniform(0.0, 0.2)), "schedule": str(rng.choice(["constant", "cosine", "step"])),
              "warmup": int(rng.integers(0, 4)), "grad_clip": sig(loguniform(rng, 0.1, 100.0)),
              "init_scale": sig(loguniform(rng, 0.3, 3.0)), "input_noise": sig(rng.uniform(0.0, 0.5)),
              "batchnorm": str(rng.choice(["no", "yes"]))})
    return c


def wide_optimizer(torch, c, parameters):
    if c["optimizer"] in ("adam", "adamw"):
        kind = torch.optim.Adam if c["optimizer"] == "adam" else torch.optim.AdamW
        return kind(parameters, lr=c["lr"], betas=(c["momentum"], c["beta2"]), eps=c["eps"],
                    weight_decay=c["weight_decay"])
    if c["optimizer"] == "rmsprop":
        return torch.optim.RMSprop(parameters, lr=c["lr"], alpha=c["beta2"], eps=c["eps"], momentum=c["momentum"],
                                   weight_decay=c["weight_decay"])
    return torch.optim.SGD(parameters, lr=c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])


def wide_schedule(torch, c, optimizer):
    """Linear warm-up for `warmup` epochs, then constant, cosine or a tenth at two thirds."""
    def factor(epoch):
        warm = min(1.0, (epoch + 1) / (c["warmup"] + 1))
        if c["schedule"] == "cosine":
            return warm * 0.5 * (1 + math.cos(math.pi * epoch / EPOCHS))
        if c["schedule"] == "step":
            return warm * (0.1 if epoch >= 2 * EPOCHS // 3 else 1.0)
        return warm
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def digits_wide24(writer, limit):
    """Torch MLPs on the digits with 24 parameters (train_wide24)."""
    train_wide24(writer, limit, digits_tensors(6), 20261204)


def train_wide24(writer, limit, data, config_seed):
    """Torch MLPs with 24 parameters on `data` (torch tensors: inputs to train and validate,
    class labels), `limit` configurations drawn with `config_seed`: each of three layers'
    width, dropout and activation (a layer past `layers` is not built, so its three do
    nothing), and the optimizer's, the schedule's and the regularisers' fifteen."""
    import torch
    torch.set_num_threads(1)
    x_train, x_val, y_train, y_val = data
    inputs, classes = x_train.shape[1], int(max(y_train.max(), y_val.max())) + 1
    activations = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "gelu": torch.nn.GELU, "silu": torch.nn.SiLU}
    rng = np.random.default_rng(config_seed)
    writer.writerow(list(wide_config(np.random.default_rng(0))) + ["step", "val_loss", "step_seconds"])
    for i in range(limit):
        c = wide_config(rng)
        torch.manual_seed(i)
        layers, width_in = [], inputs
        for layer in range(1, c["layers"] + 1):
            width = c[f"width{layer}"]
            layers.append(torch.nn.Linear(width_in, width))
            if c["batchnorm"] == "yes":
                layers.append(torch.nn.BatchNorm1d(width))
            layers += [activations[c[f"activation{layer}"]](), torch.nn.Dropout(c[f"dropout{layer}"])]
            width_in = width
        model = torch.nn.Sequential(*layers, torch.nn.Linear(width_in, classes))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.mul_(c["init_scale"])
        optimizer = wide_optimizer(torch, c, model.parameters())
        schedule = wide_schedule(torch, c, optimizer)
        generator = torch.Generator().manual_seed(i)
        loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=c["label_smoothing"])
        for epoch in range(1, EPOCHS + 1):
            start = time.perf_counter()
            model.train()
            for batch in torch.randperm(len(x_train), generator=generator).split(c["batch_size"]):
                if len(batch) < 2:  # batch norm needs two samples
                    continue
                noisy = x_train[batch] + c["input_noise"] * torch.randn(len(batch), inputs, generator=generator)
                optimizer.zero_grad()
                loss_fn(model(noisy), y_train[batch]).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
                optimizer.step()
            schedule.step()
            model.eval()
            with torch.no_grad():
                val_loss = float(torch.nn.functional.cross_entropy(model(x_val), y_val))
            seconds = time.perf_counter() - start
            if not write_step(writer, c.values(), epoch, val_loss, seconds):
                break
        progress(i, limit)


def poisson_multigrid(writer, limit):
    """Multigrid cycles of a simulation code's solver (poisson_multigrid.py): a step is one
    cycle, the metric the residual's log10 relative to the start (lower is better)."""
    from poisson_multigrid import Problem
    train_multigrid(writer, limit, Problem(), 20261205)


def train_multigrid(writer, limit, problem, config_seed):
    """`limit` solver configurations drawn with `config_seed`, each run for EPOCHS cycles on
    `problem`: a row per cycle."""
    from poisson_multigrid import Solver, residual
    h = 1.0 / (problem.n - 1)
    start_norm = float(np.linalg.norm(residual(np.zeros_like(problem.f), problem.f, problem.eps, h)))
    rng = np.random.default_rng(config_seed)
    writer.writerow(["smoother", "omega", "pre_sweeps", "post_sweeps", "levels", "cycle", "coarse_sweeps", "step",
                     "log_residual", "step_seconds"])
    for i in range(limit):
        c = {"smoother": str(rng.choice(["jacobi", "rbsor"])), "omega": sig(rng.uniform(0.2, 1.9)),
             "pre_sweeps": int(rng.integers(0, 4)), "post_sweeps": int(rng.integers(0, 4)),
             "levels": int(rng.integers(1, 8)), "cycle": str(rng.choice(["V", "W"])),
             "coarse_sweeps": lograndint(rng, 1, 65)}
        solver = Solver(problem, c["smoother"], c["omega"], c["pre_sweeps"], c["post_sweeps"], c["levels"],
                        c["cycle"], c["coarse_sweeps"])
        u = np.zeros_like(problem.f)
        with np.errstate(all="ignore"):
            for step in range(1, EPOCHS + 1):
                started = time.perf_counter()
                solver.run_cycle(u, problem.f)
                value = math.log10(float(np.linalg.norm(residual(u, problem.f, problem.eps, h))) / start_norm)
                seconds = time.perf_counter() - started
                if not write_step(writer, c.values(), step, value, seconds):
                    break
        progress(i, limit)


TABLES = {"digits-torch12": digits_torch12, "digits-cnn": digits_cnn, "wine-noisy": wine_noisy,
          "digits-xgb": digits_xgb, "licenses-charlm": licenses_charlm, "digits-rff": digits_rff,
          "digits-wide24": digits_wide24, "poisson-multigrid": poisson_multigrid}


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
