"""A small numpy MLP on a synthetic two-spirals problem, tuned by slurmtune.

Each epoch it reports the validation loss and accuracy; it saves a checkpoint when the
study asks for one (a rung passed, a pause, a shutdown) and resumes from the
checkpoint slurmtune hands it (a retry, a promotion, a resumed study).

    python3 train.py --lr 0.05 --hidden 32 --epochs 27
    python3 train.py --lr 0.05 --hidden 32 --optimizer momentum --momentum 0.9
(--momentum goes with --optimizer momentum only: conditional.toml's `when`.)
Needs numpy (Debian: python3-numpy, interpreter /usr/bin/python3).
"""
import argparse
import json
import os
import time

import numpy as np

from slurmtune import client


def spirals(n, rng):
    t = np.sqrt(rng.uniform(0, 1, n)) * 3 * np.pi
    label = rng.integers(0, 2, n)
    sign = np.where(label == 1, 1.0, -1.0)
    x = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], axis=1) / (3 * np.pi)
    return x + rng.normal(0, 0.03, x.shape), label.astype(np.float64)


def init(hidden, rng):
    return {"w1": rng.normal(0, 1.0, (2, hidden)), "b1": np.zeros(hidden),
            "w2": rng.normal(0, 1.0 / np.sqrt(hidden), (hidden, 1)), "b2": np.zeros(1)}


def forward(p, x):
    h = np.tanh(x @ p["w1"] + p["b1"])
    return h, 1 / (1 + np.exp(-(h @ p["w2"] + p["b2"])[:, 0]))


def loss_and_accuracy(p, x, y):
    _, prob = forward(p, x)
    prob = np.clip(prob, 1e-7, 1 - 1e-7)
    return float(-np.mean(y * np.log(prob) + (1 - y) * np.log(1 - prob))), float(
        np.mean((prob > 0.5) == y))


def sgd_epoch(p, x, y, lr, batch, rng, velocity=None, momentum=0.0):
    """One epoch of minibatch SGD; with `velocity` (one array per parameter), heavy-ball
    momentum."""
    order = rng.permutation(len(x))
    for start in range(0, len(x), batch):
        i = order[start:start + batch]
        h, prob = forward(p, x[i])
        d = (prob - y[i])[:, None] / len(i)
        dh = (d @ p["w2"].T) * (1 - h ** 2)
        grads = {"w2": h.T @ d, "b2": d.sum(0), "w1": x[i].T @ dh, "b1": dh.sum(0)}
        for k, g in grads.items():
            if velocity is None:
                p[k] -= lr * g
            else:
                velocity[k] = momentum * velocity[k] - lr * g
                p[k] += velocity[k]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--hidden", type=int, required=True)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--optimizer", choices=["sgd", "momentum"], default="sgd")
    parser.add_argument("--momentum", type=float, default=None)
    parser.add_argument("--epochs", type=int, default=27)
    parser.add_argument("--report-size", action="store_true",
                        help="also report n_params, the network's weight count (a second "
                             "objective: two-objectives.toml)")
    parser.add_argument("--sleep", type=float, default=0,
                        help="seconds to wait after each epoch (tests cut a run midway)")
    args = parser.parse_args()
    if (args.momentum is None) != (args.optimizer == "sgd"):
        parser.error("--momentum goes with --optimizer momentum, and only with it")

    data_rng = np.random.default_rng(0)  # the same data for every trial
    x_train, y_train = spirals(2000, data_rng)
    x_val, y_val = spirals(500, data_rng)
    rng = np.random.default_rng(client.trial_id())
    params, first_epoch = init(args.hidden, rng), 1
    velocity = ({k: np.zeros_like(v) for k, v in params.items()} if args.optimizer == "momentum"
                else None)
    resume = client.resume_checkpoint()
    if resume:
        saved = np.load(resume)
        params = {k: saved[k] for k in params}
        if velocity is not None and all("v_" + k in saved for k in velocity):
            velocity = {k: saved["v_" + k] for k in velocity}
        # The shuffling stream goes on where it was: a resumed run trains as an
        # uninterrupted one would (under PBT: as the donor would have).
        rng.bit_generator.state = json.loads(str(saved["rng"]))
        first_epoch = int(saved["epoch"]) + 1
        print("resumed from %s at epoch %d with lr %s batch %d on %s"
              % (resume, first_epoch, args.lr, args.batch,
                 os.environ.get("SLURMD_NODENAME", os.uname().nodename)), flush=True)

    checkpoint = os.path.join(client.checkpoint_dir(), "checkpoint.npz")

    def save(epoch):
        # Whole or not at all: a trial killed mid-write must not leave a cut file behind.
        partial = checkpoint + ".partial"
        with open(partial, "wb") as f:
            np.savez(f, epoch=epoch, rng=json.dumps(rng.bit_generator.state), **params,
                     **{"v_" + k: v for k, v in (velocity or {}).items()})
        os.replace(partial, checkpoint)
        client.checkpoint_saved(epoch, checkpoint)

    for epoch in range(first_epoch, args.epochs + 1):
        sgd_epoch(params, x_train, y_train, args.lr, args.batch, rng, velocity, args.momentum or 0.0)
        time.sleep(args.sleep)
        val_loss, val_accuracy = loss_and_accuracy(params, x_val, y_val)
        print("epoch %d val_loss %.4f val_accuracy %.4f" % (epoch, val_loss, val_accuracy),
              flush=True)
        try:
            size = {"n_params": sum(int(v.size) for v in params.values())} if args.report_size else {}
            client.report(step=epoch, val_loss=val_loss, val_accuracy=val_accuracy, **size)
        except client.TrialStopped as stopped:
            if stopped.checkpoint:
                save(epoch)
            raise
        if client.should_checkpoint():
            save(epoch)


if __name__ == "__main__":
    main()
