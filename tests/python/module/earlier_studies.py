"""Shared by check_warm_start.py and check_prior.py: study files of one small space for
earlier and later studies, and running the command."""
import os
import subprocess

STUDY = """[study]
name = "{name}"
metric = "{metric}"
mode = "{mode}"
seed = {seed}
max_trials = {trials}
sampler = "{sampler}"
{sampler_table}
[search]
{search}
[scheduler]
type = "asha"
max_t = 9
grace_period = 1
"""
SEARCH = ('lr = { loguniform = [1e-4, 1e-1] }\nopt = { choice = ["sgd", "adam"] }\n'
          'width = { randint = [8, 64] }\n')


def write(folder, name, **keys):
    """FOLDER/NAME.toml: a study of SEARCH (or `search`) with the keys given."""
    values = dict(name=name, metric="loss", mode="min", seed=1, trials=20, sampler="random",
                  sampler_table="", search=SEARCH)
    values.update(keys)
    path = os.path.join(folder, name + ".toml")
    with open(path, "w") as f:
        f.write(STUDY.format(**values))
    return path


def run(binary, *args, status=0):
    """The command's output (stdout, then stderr); its exit status must be `status`."""
    out = subprocess.run([binary, *args], capture_output=True, text=True)
    assert out.returncode == status, f"{args}: exit {out.returncode}, expected {status}:\n{out.stderr}"
    return out.stdout + out.stderr


def expect_in(text, wanted):
    assert wanted in text, f"expected {wanted!r} in:\n{text}"
