#!/usr/bin/env python3
"""The checks of tests/gpu/device-check.sh: real `slurmtune run` studies (local
launcher) of GPU trials, read back with `slurmtune export`, and a Markdown table of what
ran, what it measured and what was not run. Standard library only (a GPU machine may have
no h5py for this interpreter).

    device_check.py OUTDIR --slurmtune PATH --pack-trial PATH --gpus N
                    [--gpu-trial PATH] [--mpirun PATH] [--allreduce-python PATH]
                    [--torch-python PATH]

Exits 1 when a check that ran failed; a check that cannot run here (no GPU, one GPU for a
two-GPU check, no MPI) is a row that says so, not a failure.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The bench program the all-reduce row runs; checked to exist even where the row cannot
# run, so that a move of the file fails CI's GPU-less check instead of a two-GPU machine's.
ALLREDUCE_BENCH = os.path.join(ROOT, "tests", "bench", "runtime", "allreduce_bandwidth.py")
PACK_METRICS = ("loss", "visible", "device", "gpu", "cuda_devices", "pci_bus", "error", "seconds")


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def study_text(name, command, metrics, max_trials, steps, resources, trial_extra=""):
    quoted = ", ".join('"%s"' % part for part in command)
    return f"""[study]
name = "{name}"
metric = "{metrics[0]}"
metrics = [{", ".join('"%s"' % m for m in metrics)}]
mode = "min"
seed = 5
max_trials = {max_trials}

[search]
x = {{ uniform = [0.0, 1.0] }}

[scheduler]
type = "fifo"
max_t = {steps}

[trial]
{quoted and "command = [%s]" % quoted}
{trial_extra}
[resources]
{resources}
"""


class Checker:
    def __init__(self, args):
        self.args = args
        self.out = os.path.abspath(args.outdir)
        self.rows = []  # (check, result, details)
        self.failed = False

    def row(self, check, result, details):
        self.rows.append((check, result, details))
        print("%s: %s — %s" % (check, result, details), flush=True)

    def run_study(self, name, text, options, timeout=300):
        """Runs a study to its end; returns (trials, last metrics row per trial, log)."""
        folder = os.path.join(self.out, name)
        os.makedirs(folder, exist_ok=True)
        study = os.path.join(folder, "study.toml")
        with open(study, "w") as f:
            f.write(text)
        results = os.path.join(folder, "study.h5")
        log_path = os.path.join(self.out, name + ".log")
        # Loopback only: the check needs no other host, and a lent machine's name may
        # not resolve.
        command = [self.args.slurmtune, "run", study, "-o", results, "--launcher", "local",
                   "--listen", "127.0.0.1", "--advertise", "127.0.0.1", "--progress-interval", "5",
                   "--stop-grace", "2", "--kill-grace", "2"] + options
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT)
            try:
                rc = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.terminate()  # slurmtune run ends its trials within its graces
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                rc = "timeout"
        log_text = open(log_path, errors="replace").read()
        expect(rc == 0, "slurmtune run ended with %s; see %s:\n%s" % (rc, log_path, log_text[-3000:]))
        return self.table(results, "trials"), self.last_metrics(results), log_text

    def step_stderr(self, name):
        """What the ranks of a study's MPI steps wrote on stderr (STUDY.trials/step-N.err)."""
        folder = os.path.join(self.out, name, "study.trials")
        return "".join(open(os.path.join(folder, f), errors="replace").read()
                       for f in sorted(os.listdir(folder)) if f.endswith(".err"))

    def table(self, results, name):
        done = subprocess.run([self.args.slurmtune, "export", results, "--table", name],
                              capture_output=True, text=True, timeout=120)
        expect(done.returncode == 0, "export --table %s: %s" % (name, done.stderr))
        return list(csv.DictReader(io.StringIO(done.stdout)))

    def last_metrics(self, results):
        last = {}
        for row in self.table(results, "metrics"):
            last[int(row["trial"])] = row
        return last

    # ---- GPU packing ---------------------------------------------------------------
    def packing(self, per_gpu, devices, trials, work):
        """A study of one-rank trials with gpus_per_task = 1 on `devices` (a count given
        to --gpus), `per_gpu` trials per device at most; returns its measurements."""
        name = "packing-%d-per-gpu" % per_gpu
        command = [self.args.pack_trial, "--steps", "3"] + work
        text = study_text(name, command, PACK_METRICS, trials, 3, "gpus_per_task = 1\n")
        listed, last, log = self.run_study(
            name, text, ["--slots", "16", "--gpus", str(devices), "--trials-per-gpu", str(per_gpu)])
        capacity = devices * per_gpu
        expect("%d trial(s) at once" % capacity in log,
               "the launcher did not say it runs %d trial(s) at once:\n%s" % (capacity, log[-2000:]))
        expect(len(listed) == trials, "%d trials recorded, expected %d" % (len(listed), trials))
        spans = {}
        for trial in listed:
            tid = int(trial["id"])
            expect(trial["status"] == "completed",
                   "trial %d ended %s: %s" % (tid, trial["status"], trial.get("error", "")))
            metrics = last.get(tid)
            expect(metrics is not None, "trial %d reported nothing" % tid)
            expect(float(metrics["visible"]) == 1,
                   "trial %d saw %s devices in CUDA_VISIBLE_DEVICES, expected 1" % (tid, metrics["visible"]))
            device = int(float(metrics["device"]))
            expect(0 <= device < devices, "trial %d was given device %d of %d" % (tid, device, devices))
            if self.args.gpus > 0:
                self.check_on_device(tid, metrics, device)
            spans[tid] = (float(trial["start_time"]), float(trial["end_time"]), device)
        most_on_device, most_running = self.overlaps(spans, per_gpu, capacity)
        seconds = [float(last[t]["seconds"]) for t in spans]
        wall = max(s[1] for s in spans.values()) - min(s[0] for s in spans.values())
        return {"per_gpu": per_gpu, "trials": trials, "most_on_device": most_on_device,
                "most_running": most_running, "trial_s": sum(seconds) / len(seconds),
                "wall_s": wall, "devices": sorted({s[2] for s in spans.values()})}

    def check_on_device(self, tid, metrics, device):
        expect(float(metrics["gpu"]) == 1, "trial %d computed on no GPU (cuda_devices %s)"
               % (tid, metrics["cuda_devices"]))
        expect(float(metrics["cuda_devices"]) == 1,
               "trial %d saw %s CUDA devices, expected only its own" % (tid, metrics["cuda_devices"]))
        expect(float(metrics["error"]) == 0, "trial %d computed a wrong result (error %s)"
               % (tid, metrics["error"]))
        bus = self.args.bus_ids.get(device)
        expect(bus is None or int(float(metrics["pci_bus"])) == bus,
               "trial %d was given device %d (PCI bus %s) but computed on PCI bus %s"
               % (tid, device, bus, metrics["pci_bus"]))

    @staticmethod
    def overlaps(spans, per_gpu, capacity):
        """At every trial's start: the trials running, and those on its device."""
        most_on_device = most_running = 0
        for tid, (start, _, device) in spans.items():
            running = [o for o, (s, e, _) in spans.items() if s <= start < e]
            on_device = [o for o in running if spans[o][2] == device]
            expect(len(on_device) <= per_gpu,
                   "trial %d started on device %d beside %s (at most %d per device)"
                   % (tid, device, sorted(set(on_device) - {tid}), per_gpu))
            expect(len(running) <= capacity, "%d trials ran at once (at most %d)" % (len(running), capacity))
            most_on_device, most_running = max(most_on_device, len(on_device)), max(most_running, len(running))
        return most_on_device, most_running

    def check_packing(self):
        gpus = self.args.gpus
        if gpus == 0:
            # No GPU: two fake devices, sleeping trials; sharing must reach its bound.
            work = ["--cpu-seconds", "0.5"]
            for per_gpu in (1, 2):
                result = self.packing(per_gpu, 2, 6, work)
                expect(result["most_on_device"] == per_gpu,
                       "at most %d trial(s) shared a device, expected %d" % (result["most_on_device"], per_gpu))
                self.row("GPU packing, --gpus 2 (fake) --trials-per-gpu %d" % per_gpu, "pass",
                         "6 trials completed, each saw 1 device; up to %d on one device, %d at once"
                         % (result["most_on_device"], result["most_running"]))
            return
        work = ["--launches", str(self.args.launches)]
        results = []
        for per_gpu in (1, 2, 4):
            result = self.packing(per_gpu, 1, 8, work)
            expect(result["most_on_device"] == per_gpu,
                   "at most %d trial(s) shared the GPU, expected %d" % (result["most_on_device"], per_gpu))
            results.append(result)
        alone = results[0]
        for r in results:
            self.row("GPU packing, 1 GPU, --trials-per-gpu %d" % r["per_gpu"], "pass",
                     "8 trials completed on device 0, each saw 1 CUDA device and computed exactly; "
                     "%d at once; GPU work per trial %.2f s (%.2fx alone); study %.1f s (%.2fx)"
                     % (r["most_on_device"], r["trial_s"], r["trial_s"] / alone["trial_s"],
                        r["wall_s"], r["wall_s"] / alone["wall_s"]))

    # ---- NCCL communicator through the trial API ----------------------------------------
    def check_nccl(self):
        if not self.args.gpu_trial:
            self.row("NCCL communicator (gpu_trial)", "not run",
                     "gpu_trial is not built (needs SLURMTUNE_ENABLE_CUDA with NCCL and MPI)")
            return
        shapes = [(1, 2)] if self.args.gpus < 2 else [(1, 2), (2, 2)]
        for ranks, slots in shapes:
            name = "nccl-%d-rank" % ranks
            text = study_text(name, "", ("loss", "gpu", "error"), 4, 3,
                              "ranks_per_trial = %d\n" % ranks,
                              trial_extra='mode = "mpi"\nprogram = ["%s"]\n' % self.args.gpu_trial)
            listed, last, log = self.run_study(
                name, text, ["--slots", str(slots), "--mpirun", self.args.mpirun])
            expect(all(t["status"] == "completed" for t in listed) and len(listed) == 4,
                   "not every trial completed: %s" % [(t["id"], t["status"]) for t in listed])
            gpu = {int(float(last[int(t["id"])]["gpu"])) for t in listed}
            errors = {float(last[int(t["id"])]["error"]) for t in listed}
            if self.args.gpus == 0:
                expect(gpu == {0}, "a trial reports an NCCL communicator on a machine without a GPU")
                ranks_said = self.step_stderr(name)
                expect("using MPI collectives instead of NCCL" in ranks_said,
                       "the fallback to MPI collectives was not announced:\n" + ranks_said[-2000:])
                self.row("NCCL communicator (gpu_trial), no GPU", "pass",
                         "4 trials in %d-rank groups completed with the MPI fallback (gpu = 0), "
                         "announced on stderr" % ranks)
            else:
                expect(gpu == {1}, "a trial got no NCCL communicator (gpu = %s):\n%s" % (gpu, log[-2000:]))
                expect(errors == {0.0}, "the NCCL average was off by %s" % max(errors))
                self.row("NCCL communicator (gpu_trial), %d rank(s) on %d GPU(s)" % (ranks, min(ranks, self.args.gpus)),
                         "pass", "4 trials, each an NCCL communicator averaging a 4 MiB device "
                         "buffer exactly (gpu = 1, error = 0)")

    # ---- PyTorch on the GPU through the Python client -----------------------------------
    def check_torch(self):
        check = "PyTorch on the GPU (Python client), 4 trials, --trials-per-gpu 2"
        if self.args.gpus == 0 or not self.args.torch_python:
            self.row(check, "not run", "needs a GPU and a python3 whose torch has CUDA (Debian's has none)")
            return
        script = os.path.join(ROOT, "tests", "gpu", "torch_gpu_trial.py")
        metrics = ("loss", "gpu", "cuda_devices", "pci_bus", "seconds")
        text = study_text("torch", [self.args.torch_python, script], metrics, 4, 3, "gpus_per_task = 1\n")
        listed, last, _ = self.run_study("torch", text, ["--slots", "8", "--gpus", "1", "--trials-per-gpu", "2"])
        expect(len(listed) == 4, "%d trials recorded, expected 4" % len(listed))
        for trial in listed:
            tid = int(trial["id"])
            expect(trial["status"] == "completed", "trial %d ended %s: %s" % (tid, trial["status"], trial["error"]))
            self.check_on_device(tid, dict(last[tid], error="0"), 0)
        seconds = sum(float(last[int(t["id"])]["seconds"]) for t in listed) / len(listed)
        self.row(check, "pass", "every trial trained on the one device it saw (torch: 1 CUDA device, "
                 "PCI bus as given), 3 epochs in %.2f s on average" % seconds)

    # ---- all-reduce bandwidth inside vs outside -----------------------------------------
    def check_allreduce(self):
        expect(os.path.isfile(ALLREDUCE_BENCH), "the all-reduce bench %s is missing" % ALLREDUCE_BENCH)
        if self.args.gpus < 2:
            self.row("all-reduce bandwidth, NCCL, inside vs outside", "not run",
                     "needs 2 GPUs (one per rank; NCCL refuses two ranks on one GPU); this machine has %d"
                     % self.args.gpus)
            return
        if not self.args.allreduce_python:
            self.row("all-reduce bandwidth, NCCL, inside vs outside", "not run",
                     "no python3 with torch and CUDA here")
            return
        done = subprocess.run([self.args.allreduce_python, ALLREDUCE_BENCH, self.args.slurmtune, "--backend", "nccl"],
                              capture_output=True, text=True, timeout=400)
        with open(os.path.join(self.out, "allreduce.log"), "w") as f:
            f.write(done.stdout + done.stderr)
        expect(done.returncode == 0, "allreduce_bandwidth.py failed:\n" + done.stderr[-2000:])
        rows = [l for l in done.stdout.splitlines() if l.startswith("| ") and "MiB" in l]
        self.row("all-reduce bandwidth, NCCL, 2 ranks, inside vs outside", "pass",
                 "; ".join(r.strip("| ").replace(" | ", " ") for r in rows) + " (size, outside GB/s, "
                 "inside GB/s, ratio)")

    def run(self):
        for check in (self.check_packing, self.check_nccl, self.check_torch, self.check_allreduce):
            started = time.time()
            try:
                check()
            except CheckFailed as e:
                self.failed = True
                self.row(check.__name__.replace("check_", ""), "FAIL", str(e).splitlines()[0])
                print(str(e), file=sys.stderr)
            except Exception as e:  # a broken check is a failed row, the others still run
                self.failed = True
                self.row(check.__name__.replace("check_", ""), "FAIL", repr(e))
            print("  (%s: %.1f s)" % (check.__name__, time.time() - started), flush=True)
        with open(os.path.join(self.out, "checks.md"), "w") as f:
            f.write("| check | result | details |\n|---|---|---|\n")
            for check, result, details in self.rows:
                f.write("| %s | %s | %s |\n" % (check, result, details.replace("|", "/")))
        return 1 if self.failed else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--slurmtune", required=True)
    parser.add_argument("--pack-trial", required=True)
    parser.add_argument("--gpus", type=int, required=True)
    parser.add_argument("--bus-ids", default="", help="INDEX:BUS,... from nvidia-smi (bus in hex)")
    parser.add_argument("--gpu-trial", default="")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--allreduce-python", default="")
    parser.add_argument("--torch-python", default="", help="a python3 whose torch sees a GPU")
    parser.add_argument("--launches", type=int, default=600)
    args = parser.parse_args()
    args.bus_ids = {int(i): int(b, 16) for i, b in (p.split(":") for p in args.bus_ids.split(",") if p)}
    return Checker(args).run()


if __name__ == "__main__":
    sys.exit(main())
