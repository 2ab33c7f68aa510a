#!/usr/bin/python3
"""Cost of one TPE suggestion in Optuna 3.1 against the size of the history: the peer
column of build/tests/bench/bench_tpe (same space: lr log float, width int, dropout
float, optimizer with 4 choices; N completed trials with random values).
    /usr/bin/python3 tests/bench/components/bench_tpe.py [N ...]      (default 100 1000 10000)
"""
import sys
import time
import warnings

import numpy as np
import optuna

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.simplefilter("ignore")
D = optuna.distributions
SPACE = {"lr": D.FloatDistribution(1e-5, 1e-1, log=True), "width": D.IntDistribution(16, 512),
         "dropout": D.FloatDistribution(0.0, 0.5), "optimizer": D.CategoricalDistribution([0, 1, 2, 3])}


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000, 10000]
    print(f"{'history':>10} {'median_ms':>14} {'suggestions/s':>14}   (Optuna {optuna.__version__})")
    for n in sizes:
        rng = np.random.default_rng(n)
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1))
        study.add_trials([optuna.trial.create_trial(
            params={"lr": float(np.exp(np.log(1e-5) + rng.random() * np.log(1e4))),
                    "width": int(16 + rng.random() * 497), "dropout": 0.5 * rng.random(),
                    "optimizer": int(rng.integers(4))},
            distributions=SPACE, value=float(rng.random())) for _ in range(n)])
        times = []
        for _ in range(5 if n >= 10000 else 20):
            start = time.perf_counter()
            trial = study.ask(SPACE)
            times.append((time.perf_counter() - start) * 1000)
            study.tell(trial, state=optuna.trial.TrialState.FAIL)  # keeps the history as it was
        median = float(np.median(times))
        print(f"{n:>10} {median:>14.3f} {1000 / median:>14.0f}")


if __name__ == "__main__":
    main()
