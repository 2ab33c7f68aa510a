#!/usr/bin/env python3
"""`[sampler] prior` from the command line's side: validate reports what each earlier
results file gives, refuses what cannot serve as a prior (another sampler than mobster,
prior_share, prior_exact, prior_startup, prior_check or prior_model without prior, prior_model with a
random forest, another metric, not a results file)
naming the key and the file, a mobster study with a prior starts with the earlier study's best configurations,
its start-up trials lie near them, and replay, given the same files, suggests what the
study did, with prior_check too. With asha_promotion the earlier best started as they
were are trusted (`trusted_trials`, default prior_exact as resolved for the trials run at once):
they train to max_t unless their trust check ends it (a low rank at a rung, unless the
earlier study ranked it about as low there: the "lesson" waiver, the default since C20), and
replay decides as the study did; `trusted_trials = 0` keeps them judged at each rung.
Usage: check_prior.py SLURMTUNE_BINARY
"""
import os
import subprocess
import sys
import tempfile

import earlier_studies
import h5py

BINARY = sys.argv[1]

expect_in = earlier_studies.expect_in


def write(folder, name, **keys):
    return earlier_studies.write(folder, name, **dict(dict(trials=30), **keys))


def run(*args, status=0):
    return earlier_studies.run(BINARY, *args, status=status)


PARAMETERS = ("lr", "opt", "width")


def config_of(row):
    value = lambda v: v.decode() if isinstance(v, bytes) else v.item()  # noqa: E731
    return {p: value(row["config/" + p]) for p in PARAMETERS}


def configurations(path):
    """Each trial's parameters, by id, as the results file records them."""
    with h5py.File(path, "r") as f:
        return {int(r["id"]): config_of(r) for r in f["trials"][:]}


def best_earlier(path):
    """The earlier study's configurations in successive halving's order: the highest rung
    reached, then the value there (lower is better)."""
    with h5py.File(path, "r") as f:
        trials = f["trials"][:]
    ranked = sorted(trials, key=lambda r: (-float(r["last_step"]), float(r["last_value"])))
    return [config_of(r) for r in ranked]


def promoting(path, extra=""):
    """The study at `path` with asha_promotion instead of asha (plus `extra` scheduler keys)."""
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('type = "asha"\n', 'type = "asha_promotion"\n' + extra))
    return path


def last_steps(path):
    with h5py.File(path, "r") as f:
        return {int(r["id"]): float(r["last_step"]) for r in f["trials"][:]}


def check_trusted(d, table, earlier):
    """asha_promotion with a prior: the earlier best five, started as they were, are trusted
    (prior_exact, resolved for the trials run at once: 16 of 32 workers' first wave); those
    whose trust holds train to max_t (9) unpaused; replay matches; trusted_trials = 0 is kept
    as given; a file written before the trust check and its waiver resumes without them."""
    assert "trusted_trials" not in run("validate", os.path.join(d, "now.toml"))  # asha: no such key
    trusting = promoting(write(d, "trusting", sampler="mobster", seed=7, trials=20,
                               sampler_table=table.format("past.h5")))
    report = run("validate", trusting)
    expect_in(report, "trusted_trials = 5")  # every exact one since C18 (2026-12-04)
    expect_in(report, "trust_check = true")  # the default with a prior since 2026-12-04
    expect_in(report, "trust_check_waiver = 'lesson'")  # since C20 (C18: the gain from rung 1)
    assert "trust_check_waiver_from_rung" not in report, report  # 0, every rung: not written
    h5 = os.path.join(d, "trusting.h5")
    run("simulate", trusting, "-o", h5, "-q")
    steps, now = last_steps(h5), configurations(h5)
    assert [now[t] for t in range(5)] == earlier[:5], (now, earlier[:5])
    assert steps[0] == steps[1] == 9.0, steps  # the best two keep their trust to max_t
    paused = sum(1 for t, s in steps.items() if t > 4 and s < 9.0)
    assert paused > 0, steps  # the others are judged at the rungs as before
    replays_all(trusting, h5, 4)
    # The trust follows the first wave: 32 workers start (and trust) the earlier best 16.
    wide = os.path.join(d, "trusting-wide.h5")
    run("simulate", trusting, "-o", wide, "-q", "--workers", "32")
    with h5py.File(wide, "r") as f:
        resolved = f.attrs["resolved_study"]
        resolved = resolved.decode() if isinstance(resolved, bytes) else resolved
    expect_in(resolved, "prior_exact = 16\n")
    expect_in(resolved, "trusted_trials = 16\n")
    # A file written before trust_check and the waiver (its resolved study without the keys)
    # resumes without them.
    older = os.path.join(d, "trusting-older.h5")
    run("simulate", trusting, "-o", older, "-q")
    with h5py.File(older, "r+") as f:
        resolved = f.attrs["resolved_study"]
        resolved = resolved.decode() if isinstance(resolved, bytes) else resolved
        for line in ("trust_check = true\n", "trust_check_waiver = 'lesson'\n"):
            assert line in resolved, (line, resolved)
            resolved = resolved.replace(line, "")
        f.attrs["resolved_study"] = resolved
    resume = os.path.join(d, "trusting-resume.toml")
    with open(trusting) as f, open(resume, "w") as out:
        out.write(f.read() + '[trial]\ncommand = ["/bin/true"]\n')
    text = run("run", resume, "-o", older, "--allow-changes")  # the command is new: a safe change
    expect_in(text, "gives asha_promotion no trust_check; " + older + " was written before a prior's trusted "
                    "trials were checked at the rungs and resumes as it recorded (trust_check = false; a new "
                    "study would get true)")
    expect_in(text, "gives asha_promotion no trust_check_waiver or trust_check_waiver_from_rung; " + older +
                    " was written under an older default of a prior's trust waiver and resumes as it recorded "
                    "(trust_check_waiver = \"none\", trust_check_waiver_from_rung = 0; a new study would get "
                    "\"lesson\" from rung 0)")
    # A file written under C18's defaults records the gain from rung 1 and resumes with them.
    c18_keys = 'trust_check_waiver = "gain"\ntrust_check_waiver_from_rung = 1\n'
    c18_folder = os.path.join(d, "c18")
    os.makedirs(c18_folder)
    c18 = promoting(write(c18_folder, "trusting", sampler="mobster", seed=7, trials=20,
                          sampler_table=table.format(os.path.join(d, "past.h5"))), c18_keys)
    c18_h5 = os.path.join(c18_folder, "trusting.h5")
    run("simulate", c18, "-o", c18_h5, "-q")
    expect_in(resolved_study(c18_h5), "trust_check_waiver = 'gain'\ntrust_check_waiver_from_rung = 1\n")
    c18_resume = os.path.join(c18_folder, "resume.toml")
    with open(c18) as f, open(c18_resume, "w") as out:
        out.write(f.read().replace(c18_keys, "") + '[trial]\ncommand = ["/bin/true"]\n')
    text = run("run", c18_resume, "-o", c18_h5, "--allow-changes")  # names neither key
    expect_in(text, " was written under an older default of a prior's trust waiver and resumes as it recorded "
                    "(trust_check_waiver = \"gain\", trust_check_waiver_from_rung = 1; a new study would get "
                    "\"lesson\" from rung 0)")
    expect_in(text, "20/20 started")
    judged = promoting(write(d, "judged", sampler="mobster", seed=7, trials=20,
                             sampler_table=table.format("past.h5")), "trusted_trials = 0\n")
    expect_in(run("validate", judged), "trusted_trials = 0")
    unchecked = promoting(write(d, "unchecked-trust", sampler="mobster", seed=7, trials=20,
                                sampler_table=table.format("past.h5")), "trust_check = false\n")
    expect_in(run("validate", unchecked), "trust_check = false")  # kept as given
    # Never more than the earlier best started as they were.
    one = promoting(write(d, "one", sampler="mobster", seed=7, trials=20,
                          sampler_table=table.format("past.h5") + "prior_exact = 1\n"))
    expect_in(run("validate", one), "trusted_trials = 1")
    return paused


def check_lesson(d, table):
    """trust_check_waiver = "lesson" from rung 0: a trusted earlier best that ranks low at a
    rung keeps its trust while the earlier study ranked it about as low at the same resource.
    With an earlier study of 20 random trials (its shares are those of a population like this
    study's first wave), some earlier best run to max_t that the rank alone would pause;
    replay, given the same prior, decides as the study did."""
    small = os.path.join(d, "past-small.h5")
    run("simulate", write(d, "past-small", trials=20), "-o", small, "-q")
    last = {}
    for waiver in ("lesson", "none"):
        study = promoting(write(d, "lesson-" + waiver, sampler="mobster", seed=1, trials=20,
                                sampler_table=table.format("past-small.h5")),
                          f'trust_check_waiver = "{waiver}"\n')  # from rung 0 with either
        h5 = os.path.join(d, f"lesson-{waiver}.h5")
        run("simulate", study, "-o", h5, "-q")
        last[waiver] = last_steps(h5)
        if waiver == "lesson":
            report = run("validate", study)
            expect_in(report, "trust_check_waiver = 'lesson'")
            assert "trust_check_waiver_from_rung" not in report, report  # 0: not written
            replays_all(study, h5, 4)
    waived = [t for t in range(5) if last["lesson"][t] == 9.0 > last["none"][t]]
    assert waived, last
    return waived


def check_older_file_resumes(d, table):
    """A results file written before 2026-12-04 (prior_exact 2 recorded, no prior_startup and
    no prior_check in its resolved study: every start-up from the prior, unchecked) resumes
    from a study file that names none of the keys, with what it recorded, and run says so;
    without that rule the new defaults would differ from the file and the resume would be
    refused."""
    old = write(d, "old", sampler="mobster", seed=7, trials=20,
                sampler_table=table.format("past.h5") + "prior_exact = 2\n")
    h5 = os.path.join(d, "old.h5")
    run("simulate", old, "-o", h5, "-q")
    with h5py.File(h5, "r+") as f:
        resolved = f.attrs["resolved_study"]
        resolved = resolved.decode() if isinstance(resolved, bytes) else resolved
        assert "prior_startup = 10\n" in resolved and "prior_check = true\n" in resolved, resolved
        f.attrs["resolved_study"] = resolved.replace("prior_startup = 10\n", "").replace("prior_check = true\n", "")
    with open(old) as f:
        text = f.read().replace("prior_exact = 2\n", "")
    resume = os.path.join(d, "old-resume.toml")
    with open(resume, "w") as f:
        f.write(text + '[trial]\ncommand = ["/bin/true"]\n')
    out = run("run", resume, "-o", h5, "--allow-changes")  # the command is new: a safe change
    expect_in(out, "resumes with what it recorded for those of prior_exact, prior_startup and prior_check that")
    expect_in(out, "(prior_exact = 2, prior_startup = every start-up, prior_check = false; a new study would get "
                   "prior_exact = the larger of 5 and half the trials at once, prior_startup = prior_exact + 5, "
                   "prior_check = true)")
    expect_in(out, "20/20 started")


def check_model(d, table):
    """prior_model: the earlier study's observations in the model as another task. validate
    says so and the results file records it; the study's model picks differ from the same
    study's without it (the earlier rows move the model), and replay, given the same prior,
    suggests what the study did."""
    picks = {}
    for on in (True, False):
        name = "model-" + ("on" if on else "off")
        study = write(d, name, sampler="mobster", seed=7, trials=20,
                      sampler_table=table.format("past.h5") + f"prior_model = {'true' if on else 'false'}\n")
        h5 = os.path.join(d, name + ".h5")
        run("simulate", study, "-o", h5, "-q")
        picks[on] = configurations(h5)
        if on:
            report = run("validate", study)
            expect_in(report, "prior_model = true")
            expect_in(report, "the model sees the earlier studies' observations as another task (prior_model)")
            expect_in(resolved_study(h5), "prior_model = true\n")
            replays_all(study, h5, 4)
    # The start-ups (n_startup_trials = 8) are the prior's either way; the model's picks are not.
    assert all(picks[True][t] == picks[False][t] for t in range(8)), picks
    assert any(picks[True][t] != picks[False][t] for t in range(8, 20)), picks


def replays_all(study, h5, trials_at_once):
    """`replay` of the study's exported log decides as the study did, all 20 reports."""
    replayed = subprocess.run([BINARY, "replay", study, "-", "--trials-at-once", str(trials_at_once)],
                              capture_output=True, text=True, input=run("export", h5, "--table", "replay"))
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.count('"matches":true') == 20 and '"matches":false' not in replayed.stdout, \
        replayed.stdout


def resolved_study(h5):
    with h5py.File(h5, "r") as f:
        text = f.attrs["resolved_study"]
    return text.decode() if isinstance(text, bytes) else text


def check_wide_first_wave(d, table, earlier):
    """prior_exact and prior_startup not given follow the trials run at once: 12 simulated
    workers start the earlier best 6 as they were (max(5, 12 / 2)), and the results file
    records 6 and 11; a resume on an allocation of other size goes on with them, silently,
    since they are today's defaults."""
    study = write(d, "wide", sampler="mobster", seed=7, trials=20, sampler_table=table.format("past.h5"))
    h5 = os.path.join(d, "wide.h5")
    run("simulate", study, "-o", h5, "-q", "-w", "12")
    resolved = resolved_study(h5)
    expect_in(resolved, "prior_exact = 6\n")
    expect_in(resolved, "prior_startup = 11\n")
    first = configurations(h5)
    assert [first[t] for t in range(6)] == earlier[:6], ([first[t] for t in range(6)], earlier[:7])
    replays_all(study, h5, 12)
    with open(study) as f:
        text = f.read()
    resume = os.path.join(d, "wide-resume.toml")
    with open(resume, "w") as f:
        f.write(text + '[trial]\ncommand = ["/bin/true"]\n')
    out = run("run", resume, "-o", h5, "--allow-changes")  # the command is new: a safe change
    assert "defaults changed" not in out, out
    expect_in(out, "20/20 started")
    expect_in(resolved_study(h5), "prior_exact = 6\n")


def main():
    with tempfile.TemporaryDirectory(prefix="slurmtune-prior-") as d:
        past = os.path.join(d, "past.h5")
        run("simulate", write(d, "past", trials=60), "-o", past, "-q")
        run("simulate", write(d, "acc", metric="acc", mode="max"), "-o", os.path.join(d, "acc.h5"), "-q")
        with open(os.path.join(d, "junk.h5"), "w") as f:
            f.write("not HDF5")

        table = '\n[sampler]\nn_startup_trials = 8\nprior = ["{}"]\n'
        ok = write(d, "now", sampler="mobster", seed=7, trials=20, sampler_table=table.format("past.h5"))
        report = run("validate", ok)
        expect_in(report, "# prior: 60 trials of ")
        expect_in(report, "prior = [ 'past.h5' ]")
        expect_in(report, "prior_share = 0.75")
        expect_in(report, "prior_exact = 5")
        expect_in(report, "prior_startup = 10")
        expect_in(report, "prior_check = true")  # the default with a prior since 2026-12-04
        expect_in(report, "(8 start-up draws first: the earlier best max(5, half the trials run at once) as they "
                          "were, then 0.75 of them from around the prior's best configurations, less if its draws "
                          "do no better at the first rung; a first wave wider than prior_exact + 5 is the whole "
                          "space's past that")
        for name, sampler, sampler_table, wanted in (
                ("tpe", "tpe", table.format("past.h5"),
                 '[sampler] prior: is read by sampler "mobster" alone'),
                ("share", "mobster", "\n[sampler]\nprior_share = 0.5\n",
                 "[sampler] prior_share: needs prior"),
                ("share-range", "mobster", table.format("past.h5") + "prior_share = 1.5\n",
                 "[sampler] prior_share: must be in [0, 1]"),
                ("exact", "mobster", "\n[sampler]\nprior_exact = 4\n",
                 "[sampler] prior_exact: needs prior"),
                ("exact-range", "mobster", table.format("past.h5") + "prior_exact = -1\n",
                 "[sampler] prior_exact: must be at least 0"),
                ("startup", "mobster", "\n[sampler]\nprior_startup = 8\n",
                 "[sampler] prior_startup: needs prior"),
                ("check", "mobster", "\n[sampler]\nprior_check = true\n",
                 "[sampler] prior_check: needs prior"),
                ("model", "mobster", "\n[sampler]\nprior_model = true\n",
                 "[sampler] prior_model: needs prior"),
                ("model-forest", "mobster", table.format("past.h5") + 'prior_model = true\nsurrogate = "random-forest"\n',
                 "[sampler] prior_model: puts the earlier studies' observations into the Gaussian process as "
                 'another task; it goes with surrogate = "gp"'),
                ("acc", "mobster", table.format("acc.h5"),
                 "[sampler] prior: %s optimizes acc (max), this study loss (min)" % os.path.join(d, "acc.h5")),
                ("junk", "mobster", table.format("junk.h5"), "[sampler] prior: "),
                ("empty", "mobster", "\n[sampler]\nprior = []\n", "[sampler] prior: lists no results file")):
            study = write(d, "bad-" + name, sampler=sampler, sampler_table=sampler_table)
            text = run("validate", study, status=1)
            expect_in(text, wanted)

        results = os.path.join(d, "now.h5")
        run("simulate", ok, "-o", results, "-q")
        now = configurations(results)
        earlier = best_earlier(past)
        # The first five trials are the earlier study's best five, as they were.
        for t in range(5):
            assert now[t] == earlier[t], (t, now[t], earlier[:6])
        # prior_exact = 2: the first two.
        two = write(d, "two", sampler="mobster", seed=7, trials=20,
                    sampler_table=table.format("past.h5") + "prior_exact = 2\n")
        expect_in(run("validate", two), "prior_startup = 10")
        run("simulate", two, "-o", os.path.join(d, "two.h5"), "-q")
        first = configurations(os.path.join(d, "two.h5"))
        assert [first[0], first[1]] == earlier[:2], (first[0], first[1], earlier[:3])
        unchecked = write(d, "unchecked", sampler="mobster", seed=7, trials=20,
                          sampler_table=table.format("past.h5") + "prior_check = false\n")
        report = run("validate", unchecked)
        expect_in(report, "prior_check = false")  # kept as given
        assert "less if its draws do no better" not in report, report
        run("simulate", unchecked, "-o", os.path.join(d, "unchecked.h5"), "-q")
        assert configurations(os.path.join(d, "unchecked.h5"))[0] == earlier[0]
        for study, h5 in ((ok, results), (unchecked, os.path.join(d, "unchecked.h5"))):
            replays_all(study, h5, 4)  # simulate's 4 workers
        # Without the trials at once, the prior's first wave is unknown: refused, with the way out.
        refused = subprocess.run([BINARY, "replay", ok, "-"], capture_output=True, text=True,
                                 input=run("export", results, "--table", "replay"))
        assert refused.returncode == 1, refused
        expect_in(refused.stderr, ok + ": [sampler] prior starts with the earlier best max(5, half the trials run "
                                  "at once) as they were, since prior_exact is not named: give --trials-at-once N")
        expect_in(run("replay", two, "-", "--trials-at-once", "0", status=1), "--trials-at-once 0: give")
        paused = check_trusted(d, table, earlier)
        check_older_file_resumes(d, table)
        check_wide_first_wave(d, table, earlier)
        waived = check_lesson(d, table)
        check_model(d, table)
    print("prior: validate reports the file and refuses 12 kinds of bad input by key and file; a "
          "mobster study with a prior starts with the earlier best five (two with prior_exact = 2); replay matches "
          "all 20, with prior_check off too, and refuses to guess the trials at once; with asha_promotion the "
          "earlier best five were trusted (16 at 32 workers) and the best two ran to max_t, "
          f"while {paused} later trials stopped short, and replay matches all 20; a file written before "
          "the defaults of 2026-12-04 resumes with its own; 12 workers start the earlier best 6, and a resume "
          f"keeps them; the lesson waiver kept the trust of trusted trials {waived} to max_t where the rank "
          "alone paused them, and replay matches all 20; with prior_model the model's picks move and "
          "replay matches all 20")


if __name__ == "__main__":
    main()
