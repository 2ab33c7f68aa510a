#!/usr/bin/python3
"""slurmtune's Gaussian process (core/search/gaussian_process) against numpy.

    check_gp.py SLURMTUNE GP_PROBE

For fixed random data sets (1 to 7 input dimensions, 3 to 80 observations, one with
repeated inputs, one with one-hot columns) and hyperparameters, numpy computes the
Matérn-5/2 posterior mean and variance at test points and the log marginal likelihood
directly from their textbook formulas (Rasmussen & Williams 2006, eqs. 2.25-2.26 and
2.30), and the gradient of log marginal likelihood + log prior by central differences in
the log parameters. The probe must agree: the posterior and the likelihood to 1e-9
relative, the gradient to 1e-5.
"""
import math
import subprocess
import sys

import numpy as np

SIGNAL_PRIOR = (0.0, 1.5)
LENGTH_PRIOR = (math.log(0.5), 1.5)
NOISE_PRIOR = (math.log(1e-2), 2.0)


def matern52(a, b, variance, lengths):
    d = (a[:, None, :] - b[None, :, :]) / lengths
    r = np.sqrt((d * d).sum(-1))
    s = math.sqrt(5.0) * r
    return variance * (1 + s + s * s / 3) * np.exp(-s)


def lml(x, y, theta):
    variance, lengths, noise = math.exp(theta[0]), np.exp(theta[1:-1]), math.exp(theta[-1])
    k = matern52(x, x, variance, lengths) + noise * np.eye(len(y))
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    return -0.5 * y @ alpha - np.log(np.diag(chol)).sum() - 0.5 * len(y) * math.log(2 * math.pi)


def log_prior(theta):
    priors = [SIGNAL_PRIOR] + [LENGTH_PRIOR] * (len(theta) - 2) + [NOISE_PRIOR]
    return sum(-0.5 * ((t - m) / s) ** 2 for t, (m, s) in zip(theta, priors))


def posterior(x, y, points, variance, lengths, noise):
    k = matern52(x, x, variance, lengths) + noise * np.eye(len(y))
    ks = matern52(x, points, variance, lengths)
    mean = ks.T @ np.linalg.solve(k, y)
    var = variance - np.einsum("ij,ij->j", ks, np.linalg.solve(k, ks))
    return mean, var


def cases():
    rng = np.random.default_rng(2026)
    for n, dims in [(3, 1), (12, 2), (30, 3), (60, 5), (80, 7)]:
        x = rng.random((n, dims))
        y = np.sin(3 * x).sum(1) + 0.1 * rng.standard_normal(n)
        yield x, y, rng.uniform(0.5, 2.0), rng.uniform(0.1, 1.5, dims), rng.uniform(1e-3, 0.1)
    x = rng.random((10, 2))
    yield np.vstack([x, x[:4]]), rng.standard_normal(14), 1.0, np.array([0.3, 0.7]), 1e-2
    onehot = np.eye(3)[rng.integers(0, 3, 25)]
    x = np.hstack([rng.random((25, 2)), onehot])
    yield x, x[:, 0] - x[:, 2] + 0.05 * rng.standard_normal(25), 1.3, np.array([0.4, 2.0, 0.8, 0.8, 0.8]), 5e-3


def main():
    probe = sys.argv[2]
    lines, expected = [], []
    rng = np.random.default_rng(7)
    for x, y, variance, lengths, noise in cases():
        n, dims = x.shape
        points = np.vstack([rng.random((6, dims)), x[:2], rng.random((2, dims)) * 3 - 1])
        lines.append(f"{n} {dims} {len(points)}")
        lines.append(" ".join(repr(float(v)) for v in [variance, *lengths, noise]))
        for row, target in zip(x, y):
            lines.append(" ".join(repr(float(v)) for v in [*row, target]))
        for row in points:
            lines.append(" ".join(repr(float(v)) for v in row))
        theta = np.log([variance, *lengths, noise])
        grad = []
        for j in range(len(theta)):
            h = 1e-5
            up, down = theta.copy(), theta.copy()
            up[j] += h
            down[j] -= h
            grad.append(((lml(x, y, up) + log_prior(up)) - (lml(x, y, down) + log_prior(down))) / (2 * h))
        mean, var = posterior(x, y, points, variance, lengths, noise)
        expected.append((lml(x, y, theta), np.array(grad), mean, var))
    out = subprocess.run([probe], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True, timeout=60).stdout.splitlines()
    failures, at = [], 0
    for case, (want_lml, want_grad, want_mean, want_var) in enumerate(expected):
        got_lml = float(out[at].split()[1])
        got_grad = np.array([float(v) for v in out[at + 1].split()[1:]])
        rows = np.array([[float(v) for v in line.split()] for line in out[at + 2:at + 2 + len(want_mean)]])
        at += 2 + len(want_mean)
        if not math.isclose(got_lml, want_lml, rel_tol=1e-9, abs_tol=1e-9):
            failures.append(f"case {case}: log marginal likelihood {got_lml!r}, numpy {want_lml!r}")
        if not np.allclose(got_grad, want_grad, rtol=1e-5, atol=1e-5):
            failures.append(f"case {case}: gradient {got_grad}, numpy differences {want_grad}")
        if not np.allclose(rows[:, 0], want_mean, rtol=1e-9, atol=1e-9):
            failures.append(f"case {case}: posterior mean {rows[:, 0]}, numpy {want_mean}")
        if not np.allclose(rows[:, 1], np.maximum(want_var, 0), rtol=1e-7, atol=1e-9):
            failures.append(f"case {case}: posterior variance {rows[:, 1]}, numpy {want_var}")
    for failure in failures:
        print("FAIL", failure)
    if failures:
        return 1
    print(f"{len(expected)} cases: posterior mean, variance, log marginal likelihood and its gradient agree with numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
