#!/usr/bin/env python3
"""`slurmtune export --format tensorboard`, read back by an independent reader: Google's
protobuf runtime (python3-protobuf) parses every record against a schema declared here
field for field after TensorBoard's event.proto, summary.proto and the HParams plugin's
api.proto / plugin_data.proto, and the TFRecord framing is checked with a CRC-32C written
here. Every trial's scalars must equal its reports, and its HParams session its
configuration and outcome.

    check_tensorboard_export.py SLURMTUNE STUDY.toml
"""
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "share", "slurmtune", "python"))
from slurmtune.study import Study  # noqa: E402

F = descriptor_pb2.FieldDescriptorProto
OPTIONAL, REPEATED = F.LABEL_OPTIONAL, F.LABEL_REPEATED

# name: [(field, number, type, label, message type)]; message types are ours (".tb.X")
# or struct.proto's.
SCHEMA = {
    "Event": [("wall_time", 1, F.TYPE_DOUBLE), ("step", 2, F.TYPE_INT64),
              ("file_version", 3, F.TYPE_STRING), ("summary", 5, F.TYPE_MESSAGE, OPTIONAL, ".tb.Summary")],
    "Summary": [("value", 1, F.TYPE_MESSAGE, REPEATED, ".tb.SummaryValue")],
    "SummaryValue": [("tag", 1, F.TYPE_STRING), ("simple_value", 2, F.TYPE_FLOAT),
                     ("tensor", 8, F.TYPE_MESSAGE, OPTIONAL, ".tb.TensorProto"),
                     ("metadata", 9, F.TYPE_MESSAGE, OPTIONAL, ".tb.SummaryMetadata")],
    "SummaryMetadata": [("plugin_data", 1, F.TYPE_MESSAGE, OPTIONAL, ".tb.PluginData")],
    "PluginData": [("plugin_name", 1, F.TYPE_STRING), ("content", 2, F.TYPE_BYTES)],
    "TensorProto": [("dtype", 1, F.TYPE_INT32), ("tensor_shape", 2, F.TYPE_MESSAGE, OPTIONAL, ".tb.TensorShape")],
    "TensorShape": [("dim", 2, F.TYPE_MESSAGE, REPEATED, ".tb.Dim")],
    "Dim": [("size", 1, F.TYPE_INT64)],
    "HParamsPluginData": [("version", 1, F.TYPE_INT32),
                          ("experiment", 2, F.TYPE_MESSAGE, OPTIONAL, ".tb.Experiment"),
                          ("session_start_info", 3, F.TYPE_MESSAGE, OPTIONAL, ".tb.SessionStartInfo"),
                          ("session_end_info", 4, F.TYPE_MESSAGE, OPTIONAL, ".tb.SessionEndInfo")],
    "Experiment": [("name", 6, F.TYPE_STRING), ("description", 1, F.TYPE_STRING),
                   ("time_created_secs", 3, F.TYPE_DOUBLE),
                   ("hparam_infos", 4, F.TYPE_MESSAGE, REPEATED, ".tb.HParamInfo"),
                   ("metric_infos", 5, F.TYPE_MESSAGE, REPEATED, ".tb.MetricInfo")],
    "HParamInfo": [("name", 1, F.TYPE_STRING), ("type", 4, F.TYPE_INT32),
                   ("domain_discrete", 5, F.TYPE_MESSAGE, OPTIONAL, ".google.protobuf.ListValue"),
                   ("domain_interval", 6, F.TYPE_MESSAGE, OPTIONAL, ".tb.Interval")],
    "Interval": [("min_value", 1, F.TYPE_DOUBLE), ("max_value", 2, F.TYPE_DOUBLE)],
    "MetricInfo": [("name", 1, F.TYPE_MESSAGE, OPTIONAL, ".tb.MetricName")],
    "MetricName": [("group", 1, F.TYPE_STRING), ("tag", 2, F.TYPE_STRING)],
    "SessionStartInfo": [("hparams", 1, F.TYPE_MESSAGE, REPEATED, ".tb.SessionStartInfo.HparamsEntry"),
                         ("group_name", 4, F.TYPE_STRING), ("start_time_secs", 5, F.TYPE_DOUBLE)],
    "SessionEndInfo": [("status", 1, F.TYPE_INT32), ("end_time_secs", 2, F.TYPE_DOUBLE)],
}


def build_classes():
    pool = descriptor_pool.Default()
    pool.FindFileByName(struct_pb2.DESCRIPTOR.name)  # google.protobuf.Value, ListValue
    file = descriptor_pb2.FileDescriptorProto(name="slurmtune_tb_check.proto", package="tb",
                                              syntax="proto3", dependency=[struct_pb2.DESCRIPTOR.name])
    for name, fields in SCHEMA.items():
        message = file.message_type.add(name=name)
        for field in fields:
            fname, number, ftype = field[:3]
            label = field[3] if len(field) > 3 else OPTIONAL
            entry = message.field.add(name=fname, number=number, type=ftype, label=label)
            if len(field) > 4:
                entry.type_name = field[4]
        if name == "SessionStartInfo":  # map<string, google.protobuf.Value> hparams = 1
            nested = message.nested_type.add(name="HparamsEntry")
            nested.options.map_entry = True
            nested.field.add(name="key", number=1, type=F.TYPE_STRING, label=OPTIONAL)
            nested.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=OPTIONAL,
                             type_name=".google.protobuf.Value")
    pool.Add(file)
    factory = message_factory.MessageFactory(pool)
    return {name: factory.GetPrototype(pool.FindMessageTypeByName("tb." + name)) for name in SCHEMA}


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        assert length_crc == masked(crc32c(header)), f"{path}: bad length CRC at byte {at}"
        body = data[at + 12:at + 12 + length]
        (body_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        assert body_crc == masked(crc32c(body)), f"{path}: bad data CRC at byte {at}"
        yield body
        at += 16 + length


def events(classes, run_dir):
    files = glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))
    assert len(files) == 1, f"{run_dir}: {files}"
    out = []
    for body in records(files[0]):
        event = classes["Event"]()
        event.ParseFromString(body)
        out.append(event)
    assert out[0].file_version == "brain.Event:2", out[0]
    return out[1:]


def hparams_data(classes, event, tag):
    (value,) = event.summary.value
    assert value.tag == tag and value.metadata.plugin_data.plugin_name == "hparams", value
    assert value.tensor.dtype == 1 and [d.size for d in value.tensor.tensor_shape.dim] == [0]
    data = classes["HParamsPluginData"]()
    data.ParseFromString(value.metadata.plugin_data.content)
    assert data.version == 0
    return data


def plain(value):
    kind = value.WhichOneof("kind")
    return {"number_value": value.number_value, "string_value": value.string_value,
            "bool_value": value.bool_value}[kind]


def main():
    slurmtune, study_toml = sys.argv[1], sys.argv[2]
    classes = build_classes()
    work = tempfile.mkdtemp(prefix="slurmtune-tb-")
    try:
        check(slurmtune, study_toml, classes, work)
        check_objectives(slurmtune, classes, work)
    finally:  # nothing is left in the temp folder, whatever the outcome
        shutil.rmtree(work, ignore_errors=True)


def check(slurmtune, study_toml, classes, work):
    path = os.path.join(work, "study.h5")
    subprocess.run([slurmtune, "simulate", study_toml, "-w", "8", "-q", "-o", path], check=True,
                   stdout=subprocess.DEVNULL)
    logs = os.path.join(work, "logs")
    out = subprocess.run([slurmtune, "export", path, "--format", "tensorboard", "-o", logs],
                         check=True, capture_output=True, text=True).stdout
    again = subprocess.run([slurmtune, "export", path, "--format", "tensorboard", "-o", logs],
                           capture_output=True, text=True)
    assert again.returncode == 1 and "not an empty folder" in again.stderr, again.stderr

    s = Study(path)
    (experiment_event,) = events(classes, logs)
    experiment = hparams_data(classes, experiment_event, "_hparams_/experiment").experiment
    assert experiment.name == s.name
    infos = {h.name: h for h in experiment.hparam_infos}
    assert list(infos) == [c[len("config/"):] for c in s.config_columns], list(infos)
    assert [m.name.tag for m in experiment.metric_infos] == [s.metric]
    lr = infos["lr"].domain_interval
    assert (lr.min_value, lr.max_value) == (1e-4, 1e-1) and infos["lr"].type == 3
    assert infos["optimizer"].type == 1
    assert [plain(v) for v in infos["optimizer"].domain_discrete.values] == ["sgd", "adam"]

    metrics, trials = s.metrics, s.trials
    scalars = 0
    for trial, row in trials.iterrows():
        run = events(classes, os.path.join(logs, f"trial-{trial}"))
        start = hparams_data(classes, run[0], "_hparams_/session_start_info").session_start_info
        config = {k: plain(v) for k, v in start.hparams.items()}
        expected = {c[len("config/"):]: row[c] for c in s.config_columns}
        assert config.keys() == expected.keys(), (config, expected)
        for name, value in expected.items():
            assert config[name] == (value if isinstance(value, str) else float(value)), (trial, name)
        assert start.start_time_secs == row["start_time"]
        end = hparams_data(classes, run[-1], "_hparams_/session_end_info").session_end_info
        assert end.status == (2 if row["status"] == "failed" else 1) and end.end_time_secs == row["end_time"]
        got = [(e.step, e.wall_time, e.summary.value[0].tag, e.summary.value[0].simple_value)
               for e in run[1:-1]]
        reports = metrics[metrics["trial"] == trial]
        want = [(round(r.step), r.time, s.metric, struct.unpack("<f", struct.pack("<f", r.val_loss))[0])
                for r in reports.itertuples()]
        assert got == want, (trial, got[:3], want[:3])
        scalars += len(got)
    assert scalars == len(metrics) and f"{len(trials)} runs" in out, (scalars, out)
    s.close()
    print(f"tensorboard export: {len(trials)} runs, {scalars} scalars equal the study's reports; "
          f"the experiment's {len(infos)} hyperparameters and every session parse with protobuf "
          f"{sys.modules['google.protobuf'].__version__}; every record's CRC-32C checks")


def check_objectives(slurmtune, classes, work):
    """Two objectives: every session carries slurmtune/pareto (on the front, as the Python
    module finds it) and slurmtune/feasible, and every objective is a metric."""
    study_toml = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "data", "studies", "two-objectives.toml")
    path = os.path.join(work, "two.h5")
    subprocess.run([slurmtune, "simulate", study_toml, "-w", "4", "-q", "-o", path], check=True,
                   stdout=subprocess.DEVNULL)
    logs = os.path.join(work, "two-logs")
    subprocess.run([slurmtune, "export", path, "--format", "tensorboard", "-o", logs], check=True,
                   capture_output=True)
    s = Study(path)
    (experiment_event,) = events(classes, logs)
    experiment = hparams_data(classes, experiment_event, "_hparams_/experiment").experiment
    infos = {h.name: h for h in experiment.hparam_infos}
    assert infos["slurmtune/pareto"].type == 2 and infos["slurmtune/feasible"].type == 2, list(infos)
    assert [m.name.tag for m in experiment.metric_infos] == s.objectives
    front = set(s.pareto_front().index)
    on_front = set()
    for trial in s.trials.index:
        run = events(classes, os.path.join(logs, f"trial-{trial}"))
        start = hparams_data(classes, run[0], "_hparams_/session_start_info").session_start_info
        hparams = {k: plain(v) for k, v in start.hparams.items()}
        assert hparams["slurmtune/feasible"] is True, (trial, hparams)
        if hparams["slurmtune/pareto"]:
            on_front.add(trial)
    assert front and on_front == front, (sorted(on_front), sorted(front))
    s.close()
    print(f"tensorboard export of two objectives: the {len(front)} trials of the Pareto front "
          f"marked slurmtune/pareto, as the Python module finds them")


if __name__ == "__main__":
    main()
