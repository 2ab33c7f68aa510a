"""An independent model of Ray Tune's AsyncHyperBandScheduler decisions, with numpy's
nanpercentile computing every cutoff. Shared by check_ray_asha.py (replay) and the
`slurmtune run` end-to-end checks (decisions recorded in real results files)."""
import numpy as np


def milestones(grace, rf, max_t, skip):
    out, m, k = [], grace, 0
    while m <= max_t:
        if k >= skip:
            out.append(m)
        m *= rf
        k += 1
    return out


class RayModel:
    """Ray's _Bracket.on_result / AsyncHyperBandScheduler.on_trial_result, restated."""

    def __init__(self, grace, rf, max_t, brackets, stop_last, sign):
        self.rf, self.max_t, self.stop_last, self.sign = rf, max_t, stop_last, sign
        self.brackets = [[(m, {}) for m in reversed(milestones(grace, rf, max_t, s))]
                         for s in range(brackets)]
        self.bracket_of = {}

    def judge(self, trial, step, value):
        rungs = self.brackets[self.bracket_of[trial]]
        reward = self.sign * value
        for index, (milestone, recorded) in enumerate(rungs):
            if step >= milestone and trial in recorded and not self.stop_last:
                break
            if step < milestone or trial in recorded:
                continue
            cutoff = None
            if recorded:
                cutoff = float(np.nanpercentile(list(recorded.values()), (1 - 1 / self.rf) * 100))
            decision = "stop" if cutoff is not None and reward < cutoff else "continue"
            recorded[trial] = reward
            rung = len(rungs) - 1 - index
            return decision, rung, milestone, None if cutoff is None else self.sign * cutoff
        return "continue", None, None, None

    def report(self, trial, step, value):
        if self.stop_last and step >= self.max_t:
            return "stop", None, None, None
        return self.judge(trial, step, value)

    def end(self, trial, state, step, value):
        if state != "failed":
            self.judge(trial, step, value)
