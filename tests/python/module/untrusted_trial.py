"""The trial of check_untrusted_text.py's `run` studies: every name it handles is hostile.

    untrusted_trial.py METRIC ERROR CHECKPOINT NAMES_JSON [VALUE ...]

NAMES_JSON lists the parameters whose `{placeholder}` values follow as VALUE: each must
be the parameter's value as the client's params() gives it, or the trial fails with
"argv mismatch". Every third trial writes ERROR to stderr and fails before it reports;
the others report METRIC at steps 1..9 under its hostile name and, once promoted past
step 1, save a checkpoint file named CHECKPOINT (in their folder).
"""
import json
import sys

from slurmtune import client


def same(text, value):
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, float):
        return float(text) == value
    return text == str(value)


def main():
    metric, error, checkpoint_name, names = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    trial = client.connect()
    params = trial.params
    for name, text in zip(names, sys.argv[5:]):
        if not same(text, params[name]):
            trial.finish(False, "argv mismatch")
            sys.exit(2)
    if trial.trial_id % 3 == 0:
        sys.stderr.write(error)
        sys.exit(1)
    x = next(v for v in params.values() if isinstance(v, float))
    try:
        for step in range(1, 10):
            trial.report(step, **{metric: (x - 0.3) ** 2 + 1.0 / step})
            if step == 1:
                path = trial.trial_dir + "/" + checkpoint_name
                with open(path, "w", encoding="utf-8") as f:
                    f.write(json.dumps(params))
                trial.checkpoint_saved(step, path)
    except client.TrialStopped:
        pass
    trial.finish()


if __name__ == "__main__":
    main()
