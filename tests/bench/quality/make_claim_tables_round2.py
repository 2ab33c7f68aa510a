#!/usr/bin/python3
"""Records issue #64's second round of claim tables (item 4) from real training on this
machine, after the setting they judge was fixed (doc/performance/search-quality.md,
"Second claim tables of issue #64 (item 4)"). The first round's four tables are tuning
tables now, so these are new instances of the issue's shapes, none of them a model or a
data set an earlier table used:

  python-charformer  a causal transformer over the characters of Python's own standard
                     library source (a language model with attention): 200 configurations x
                     27 steps of 4 minibatches, 12 parameters; val_loss in nats
  digits-plain       deep MLPs with no normalisation and no skip connections, whose weight
                     scale and step size each train only in a narrow band (a narrow good
                     region; runs that diverge end there): 300 x 27 epochs, 7 parameters
  cancer-xgb22       xgboost on the breast-cancer data with 22 parameters (tree and DART
                     boosters; DART's five do nothing under trees): 300 x 27 steps of 4
                     rounds; val_logloss
  cartpole-pg        policy-gradient agents on the cart-pole (reinforcement learning: noisy
                     curves that rise and fall, and steps whose cost grows as the agent
                     learns to balance longer): 300 x 27 steps; val_shortfall, the share of
                     the 500 steps an evaluation episode falls short of

Configurations are drawn at random (fixed seeds) from the search spaces in the .toml
files. Run with Debian's interpreter, one process per table (each uses one thread):
  /usr/bin/python3 tests/bench/quality/make_claim_tables_round2.py cartpole-pg [--limit N] [--out DIR]

The tables are written to tests/bench/data/claim-tables-2/ beside their study files.
"""
import math
import os
import sysconfig
import time

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import numpy as np  # noqa: E402
from make_claim_tables import EPOCHS, digits_tensors, lograndint, write_step  # noqa: E402
from make_curve_tables import DATA, loguniform, progress, record_from_command_line, sig  # noqa: E402

# Modules of the standard library that every CPython 3 ships: the corpus is their source.
CORPUS_MODULES = ("argparse.py", "textwrap.py", "shlex.py", "difflib.py", "fractions.py", "heapq.py",
                  "bisect.py", "calendar.py")
BATCHES_PER_STEP = 4


def python_corpus(torch):
    """The modules' source as character ids: each file's first 90 % to train on, its last
    10 % to validate on."""
    folder = sysconfig.get_paths()["stdlib"]
    texts = [open(os.path.join(folder, name), encoding="utf-8").read() for name in CORPUS_MODULES]
    alphabet = {ch: i for i, ch in enumerate(sorted(set("".join(texts))))}
    encode = lambda text: torch.tensor([alphabet[ch] for ch in text], dtype=torch.long)  # noqa: E731
    train = torch.cat([encode(t[: int(0.9 * len(t))]) for t in texts])
    val = torch.cat([encode(t[int(0.9 * len(t)):]) for t in texts])
    starts = torch.linspace(0, len(val) - 65, 16).long()
    return train, val[starts.view(-1, 1) + torch.arange(65)], len(alphabet)


def charformer_config(rng):
    return {"layers": int(rng.integers(1, 3)), "heads": int(rng.choice([1, 2, 4])),
            "head_dim": lograndint(rng, 4, 33), "ff_mult": int(rng.integers(1, 5)),
            "dropout": sig(rng.uniform(0.0, 0.3)), "optimizer": str(rng.choice(["sgd", "adam", "adamw"])),
            "lr": sig(loguniform(rng, 1e-4, 1.0)), "momentum": sig(rng.uniform(0.0, 0.99)),
            "weight_decay": sig(loguniform(rng, 1e-6, 0.1)), "warmup": int(rng.integers(0, 6)),
            "seq_len": int(rng.choice([16, 32, 64])), "batch_size": int(rng.choice([4, 8, 16]))}


class CharFormer:
    """Character and position embeddings, `layers` causal self-attention blocks (pre-norm
    torch.nn.TransformerEncoderLayer) and a linear read-out."""

    def __init__(self, torch, c, vocabulary, context=64):
        width = c["heads"] * c["head_dim"]
        self.tokens = torch.nn.Embedding(vocabulary, width)
        self.positions = torch.nn.Embedding(context, width)
        block = torch.nn.TransformerEncoderLayer(width, c["heads"], c["ff_mult"] * width, c["dropout"],
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(block, c["layers"], enable_nested_tensor=False)
        self.head = torch.nn.Linear(width, vocabulary)
        self.modules = torch.nn.ModuleList([self.tokens, self.positions, self.blocks, self.head])
        self.torch = torch

    def __call__(self, ids):
        length = ids.shape[1]
        mask = self.torch.triu(self.torch.full((length, length), float("-inf")), diagonal=1)
        x = self.tokens(ids) + self.positions(self.torch.arange(length))
        return self.head(self.blocks(x, mask=mask))


def charformer_optimizer(torch, c, parameters):
    if c["optimizer"] == "sgd":
        return torch.optim.SGD(parameters, lr=c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])
    kind = torch.optim.Adam if c["optimizer"] == "adam" else torch.optim.AdamW
    return kind(parameters, lr=c["lr"], betas=(c["momentum"], 0.999), weight_decay=c["weight_decay"])


def python_charformer(writer, limit):
    import torch
    torch.set_num_threads(1)
    train, val_batch, vocabulary = python_corpus(torch)
    rng = np.random.default_rng(20261206)
    writer.writerow(list(charformer_config(np.random.default_rng(0))) + ["step", "val_loss", "step_seconds"])
    loss_fn = torch.nn.CrossEntropyLoss()
    for i in range(limit):
        c = charformer_config(rng)
        torch.manual_seed(i)
        model = CharFormer(torch, c, vocabulary)
        optimizer = charformer_optimizer(torch, c, model.modules.parameters())
        # Linear warm-up over the first `warmup` steps, then constant.
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (c["warmup"] + 1)))
        generator = torch.Generator().manual_seed(i)
        span = torch.arange(c["seq_len"] + 1)
        for step in range(1, EPOCHS + 1):
            start = time.perf_counter()
            model.modules.train()
            for _ in range(BATCHES_PER_STEP):
                offsets = torch.randint(0, len(train) - c["seq_len"] - 1, (c["batch_size"], 1), generator=generator)
                window = train[offsets + span]
                optimizer.zero_grad()
                logits = model(window[:, :-1])
                loss_fn(logits.reshape(-1, vocabulary), window[:, 1:].reshape(-1)).backward()
                torch.nn.utils.clip_grad_norm_(model.modules.parameters(), 1.0)
                optimizer.step()
            schedule.step()
            model.modules.eval()
            with torch.no_grad():
                logits = model(val_batch[:, :-1])
                val_loss = float(loss_fn(logits.reshape(-1, vocabulary), val_batch[:, 1:].reshape(-1)))
            if not write_step(writer, c.values(), step, val_loss, time.perf_counter() - start):
                break
        progress(i, limit)


def plain_config(rng):
    return {"depth": int(rng.integers(4, 13)), "width": lograndint(rng, 32, 129),
            "activation": str(rng.choice(["tanh", "relu"])), "init_scale": sig(loguniform(rng, 0.05, 20.0)),
            "lr": sig(loguniform(rng, 1e-5, 10.0)), "momentum": sig(rng.uniform(0.0, 0.99)),
            "batch_size": int(rng.choice([16, 32, 64, 128]))}


def digits_plain(writer, limit):
    """Plain deep MLPs on the digits (train_plain)."""
    train_plain(writer, limit, digits_tensors(7), 20261207)


def train_plain(writer, limit, data, config_seed):
    """Plain deep MLPs on `data` (torch tensors: inputs to train and validate, class labels),
    `limit` configurations drawn with `config_seed`: every layer's weights drawn with standard
    deviation init_scale / sqrt(fan-in), no normalisation, no skip connections, SGD with
    momentum. A deep plain net trains only near the weight scale where signals neither
    vanish nor explode, and only in a band of step sizes below divergence."""
    import torch
    torch.set_num_threads(1)
    x_train, x_val, y_train, y_val = data
    inputs, classes = x_train.shape[1], int(max(y_train.max(), y_val.max())) + 1
    activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
    rng = np.random.default_rng(config_seed)
    writer.writerow(list(plain_config(np.random.default_rng(0))) + ["step", "val_loss", "step_seconds"])
    loss_fn = torch.nn.CrossEntropyLoss()
    for i in range(limit):
        c = plain_config(rng)
        torch.manual_seed(i)
        layers, width_in = [], inputs
        for _ in range(c["depth"]):
            layers += [torch.nn.Linear(width_in, c["width"]), activations[c["activation"]]()]
            width_in = c["width"]
        model = torch.nn.Sequential(*layers, torch.nn.Linear(width_in, classes))
        with torch.no_grad():
            for module in model:
                if isinstance(module, torch.nn.Linear):
                    module.weight.normal_(0.0, c["init_scale"] / math.sqrt(module.in_features))
                    module.bias.zero_()
        optimizer = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=c["momentum"])
        generator = torch.Generator().manual_seed(i)
        for epoch in range(1, EPOCHS + 1):
            start = time.perf_counter()
            model.train()
            for batch in torch.randperm(len(x_train), generator=generator).split(c["batch_size"]):
                optimizer.zero_grad()
                loss_fn(model(x_train[batch]), y_train[batch]).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                val_loss = float(loss_fn(model(x_val), y_val))
            if not write_step(writer, c.values(), epoch, val_loss, time.perf_counter() - start):
                break
        progress(i, limit)


def xgb22_config(rng):
    return {"booster": str(rng.choice(["gbtree", "dart"])), "eta": sig(loguniform(rng, 1e-3, 1.0)),
            "max_depth": int(rng.integers(1, 11)), "min_child_weight": sig(loguniform(rng, 1e-2, 100.0)),
            "gamma": sig(loguniform(rng, 1e-4, 10.0)), "subsample": sig(rng.uniform(0.3, 1.0)),
            "colsample_bytree": sig(rng.uniform(0.2, 1.0)), "colsample_bylevel": sig(rng.uniform(0.2, 1.0)),
            "colsample_bynode": sig(rng.uniform(0.2, 1.0)), "lambda": sig(loguniform(rng, 1e-4, 100.0)),
            "alpha": sig(loguniform(rng, 1e-4, 100.0)), "max_delta_step": sig(rng.uniform(0.0, 10.0)),
            "tree_method": str(rng.choice(["hist", "approx"])),
            "grow_policy": str(rng.choice(["depthwise", "lossguide"])), "max_leaves": lograndint(rng, 2, 257),
            "max_bin": int(rng.choice([16, 32, 64, 128, 256])), "scale_pos_weight": sig(loguniform(rng, 0.2, 5.0)),
            "rate_drop": sig(rng.uniform(0.0, 0.5)), "skip_drop": sig(rng.uniform(0.0, 0.9)),
            "sample_type": str(rng.choice(["uniform", "weighted"])),
            "normalize_type": str(rng.choice(["tree", "forest"])), "one_drop": int(rng.integers(0, 2))}


def cancer_xgb22(writer, limit):
    """Boosting on the breast-cancer data (569 samples, 30 features; 30 % held out) with
    22 parameters (train_xgb22)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    x, y = load_breast_cancer(return_X_y=True)
    train_xgb22(writer, limit, train_test_split(x, y, test_size=0.3, random_state=8, stratify=y), 20261208)


def train_xgb22(writer, limit, data, config_seed, rounds_per_step=4):
    """xgboost with 22 parameters on `data` (inputs to train and validate, class labels),
    `limit` configurations drawn with `config_seed`, a step being `rounds_per_step` more
    rounds of the same booster; its validation log loss (binary, or multi-class where the
    labels hold more than two classes)."""
    import xgboost
    x_train, x_val, y_train, y_val = data
    classes = int(max(y_train.max(), y_val.max())) + 1
    train, val = xgboost.DMatrix(x_train, label=y_train), xgboost.DMatrix(x_val, label=y_val)
    task = ({"objective": "binary:logistic", "eval_metric": "logloss"} if classes == 2 else
            {"objective": "multi:softprob", "eval_metric": "mlogloss", "num_class": classes})
    rng = np.random.default_rng(config_seed)
    writer.writerow(list(xgb22_config(np.random.default_rng(0))) + ["step", "val_logloss", "step_seconds"])
    for i in range(limit):
        c = xgb22_config(rng)
        params = {**c, **task, "nthread": 1, "seed": i, "verbosity": 0}
        booster = None
        for step in range(1, EPOCHS + 1):
            start = time.perf_counter()
            booster = xgboost.train(params, train, rounds_per_step, xgb_model=booster)
            # DART drops trees while training only; prediction uses every tree, scaled.
            value = validation_log_loss(booster.predict(val), y_val)
            if not write_step(writer, c.values(), step, value, time.perf_counter() - start):
                break
        progress(i, limit)


def validation_log_loss(p, y):
    """The mean log loss of predicted probabilities `p` (a vector for two classes, a row per
    sample otherwise) against labels `y`."""
    # The upper clip in p's own type: in float32 (xgboost's) 1 - 1e-15 rounds to 1.0, and a
    # sample predicted at exactly 1.0 would make the loss NaN instead of large. Computing in
    # p's type keeps every other loss as the recorded tables have it.
    p = np.asarray(p)
    below_one = min(p.dtype.type(1 - 1e-15), np.nextafter(p.dtype.type(1), p.dtype.type(0)))
    p = np.clip(p, 1e-15, below_one)
    if p.ndim == 1:
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return float(-np.mean(np.log(p[np.arange(len(y)), y.astype(int)])))


class CartPoles:
    """Many cart-poles at once (Barto, Sutton and Anderson 1983, as in Gym's CartPole-v1:
    Euler steps of 20 ms, failure past 12 degrees or 2.4 m, at most 500 steps), with a gust
    on the cart at every step (normal, GUST newtons): without it a greedy policy balances
    to the end soon after it learns to, and most agents would tie at the best value."""

    GRAVITY, CART, POLE, HALF_LENGTH, FORCE, TAU, GUST = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02, 10.0
    MAX_STEPS = 500

    def __init__(self, n, rng):
        self.rng = rng
        self.state = rng.uniform(-0.05, 0.05, size=(n, 4))
        self.alive = np.ones(n, dtype=bool)
        self.steps = np.zeros(n, dtype=int)

    def step(self, push_right):
        x, v, theta, omega = self.state.T
        force = np.where(push_right, self.FORCE, -self.FORCE) + self.rng.normal(0.0, self.GUST, len(x))
        total = self.CART + self.POLE
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + self.POLE * self.HALF_LENGTH * omega ** 2 * sin) / total
        alpha = (self.GRAVITY * sin - cos * temp) / (
            self.HALF_LENGTH * (4.0 / 3.0 - self.POLE * cos ** 2 / total))
        accel = temp - self.POLE * self.HALF_LENGTH * alpha * cos / total
        self.state = np.stack([x + self.TAU * v, v + self.TAU * accel, theta + self.TAU * omega,
                               omega + self.TAU * alpha], axis=1)
        self.steps += self.alive
        fallen = (np.abs(self.state[:, 0]) > 2.4) | (np.abs(self.state[:, 2]) > 12 * math.pi / 180)
        self.alive &= ~fallen & (self.steps < self.MAX_STEPS)


def pg_config(rng):
    return {"lr": sig(loguniform(rng, 1e-4, 1.0)), "optimizer": str(rng.choice(["sgd", "adam", "rmsprop"])),
            "hidden": lograndint(rng, 4, 129), "layers": int(rng.integers(1, 3)),
            "activation": str(rng.choice(["tanh", "relu"])), "horizon": sig(loguniform(rng, 10.0, 1000.0)),
            "entropy": sig(loguniform(rng, 1e-4, 0.1)), "baseline": str(rng.choice(["none", "mean", "critic"])),
            "episodes": int(rng.choice([2, 4, 8, 16])), "normalise": str(rng.choice(["no", "yes"]))}


def rollout(torch, policy, n, rng, sample=True):
    """`n` episodes at once: the observations, actions and whether each was alive at each
    time step, and each episode's length."""
    poles = CartPoles(n, rng)
    observations, actions, alive = [], [], []
    while poles.alive.any():
        obs = torch.tensor(poles.state, dtype=torch.float32)
        with torch.no_grad():
            p_right = torch.sigmoid(policy(obs)[:, 0]).numpy()
        act = rng.random(n) < p_right if sample else p_right > 0.5
        observations.append(obs)
        actions.append(act)
        alive.append(poles.alive.copy())
        poles.step(act)
    return observations, actions, alive, poles.steps


def network(torch, c, outputs):
    activation = torch.nn.Tanh if c["activation"] == "tanh" else torch.nn.ReLU
    layers, width_in = [], 4
    for _ in range(c["layers"]):
        layers += [torch.nn.Linear(width_in, c["hidden"]), activation()]
        width_in = c["hidden"]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width_in, outputs))


def pg_update(torch, c, policy, critic, optimizer, episodes):
    """One REINFORCE update over a batch of episodes: each action's discounted return to go,
    less a baseline (none, the batch's mean return at that time, or a learnt critic),
    optionally normalised, with an entropy bonus."""
    observations, actions, alive, _ = episodes
    obs = torch.stack(observations)                      # time x episodes x 4
    act = torch.tensor(np.array(actions), dtype=torch.float32)
    mask = torch.tensor(np.array(alive), dtype=torch.float32)
    returns = torch.zeros_like(mask)
    discount = 1.0 - 1.0 / c["horizon"]  # rewards this many steps ahead count 1/e as much
    running = torch.zeros(mask.shape[1])
    for t in range(mask.shape[0] - 1, -1, -1):
        running = mask[t] * (1.0 + discount * running)
        returns[t] = running
    logits = policy(obs)[..., 0]
    advantage = returns
    critic_loss = torch.zeros(())
    if c["baseline"] == "mean":
        advantage = returns - (returns * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1)
    elif c["baseline"] == "critic":
        values = critic(obs)[..., 0]
        critic_loss = (((values - returns) ** 2) * mask).sum() / mask.sum()
        advantage = returns - values.detach()
    if c["normalise"] == "yes":
        alive_adv = advantage[mask > 0]
        advantage = (advantage - alive_adv.mean()) / (alive_adv.std() + 1e-8)
    log_p = -torch.nn.functional.binary_cross_entropy_with_logits(logits, act, reduction="none")
    p = torch.sigmoid(logits)
    entropy = -(p * torch.log(p + 1e-8) + (1 - p) * torch.log(1 - p + 1e-8))
    loss = -((log_p * advantage + c["entropy"] * entropy) * mask).sum() / mask.sum() + critic_loss
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([q for g in optimizer.param_groups for q in g["params"]], 10.0)
    optimizer.step()


def cartpole_pg(writer, limit, evaluations=8):
    """A step is 4 updates of `episodes` episodes each, then `evaluations` greedy episodes
    from fixed starts; the metric is their mean shortfall of the 500 steps (0: all balance
    to the end)."""
    import torch
    torch.set_num_threads(1)
    rng = np.random.default_rng(20261209)
    writer.writerow(list(pg_config(np.random.default_rng(0))) + ["step", "val_shortfall", "step_seconds"])
    for i in range(limit):
        c = pg_config(rng)
        torch.manual_seed(i)
        policy, critic = network(torch, c, 1), network(torch, c, 1)
        parameters = list(policy.parameters()) + (list(critic.parameters()) if c["baseline"] == "critic" else [])
        kind = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "rmsprop": torch.optim.RMSprop}[c["optimizer"]]
        optimizer = kind(parameters, lr=c["lr"])
        episodes_rng = np.random.default_rng(i)
        for step in range(1, EPOCHS + 1):
            start = time.perf_counter()
            for _ in range(4):
                pg_update(torch, c, policy, critic, optimizer, rollout(torch, policy, c["episodes"], episodes_rng))
            lengths = rollout(torch, policy, evaluations, np.random.default_rng(1_000_000 + step), sample=False)[3]
            shortfall = float(np.mean(1.0 - lengths / CartPoles.MAX_STEPS))
            if not write_step(writer, c.values(), step, shortfall, time.perf_counter() - start):
                break
        progress(i, limit)


TABLES = {"python-charformer": (python_charformer, 200), "digits-plain": (digits_plain, 300),
          "cancer-xgb22": (cancer_xgb22, 300), "cartpole-pg": (cartpole_pg, 300)}


def main():
    record_from_command_line(__doc__, TABLES, os.path.join(DATA, "claim-tables-2"), choices=list(TABLES))


if __name__ == "__main__":
    main()
