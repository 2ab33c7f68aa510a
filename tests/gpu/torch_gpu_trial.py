#!/usr/bin/env python3
"""A PyTorch trial on the GPU it was given, for the device check (device_check.py):
trains a small MLP on fixed random data with CUDA for a few epochs and reports its loss
through slurmtune's Python client, with the device count torch sees and the PCI bus of
the device it trained on. Needs a torch built with CUDA (Debian's is not).

    torch_gpu_trial.py [--epochs N]
"""
import argparse
import time

import torch

from slurmtune import client

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()
lr = 10 ** (-3 + 2 * float(client.params()["x"]))
device = torch.device("cuda", 0)
torch.manual_seed(0)
inputs = torch.randn(65536, 256, device=device)
targets = (inputs[:, :8].sum(dim=1, keepdim=True) > 0).float()
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
loss_fn = torch.nn.BCEWithLogitsLoss()
bus = float(torch.cuda.get_device_properties(device).pci_bus_id)
started = time.time()
for epoch in range(1, args.epochs + 1):
    for batch in range(0, len(inputs), 1024):
        optimizer.zero_grad()
        loss = loss_fn(model(inputs[batch:batch + 1024]), targets[batch:batch + 1024])
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    client.report(epoch, loss=float(loss), gpu=1.0, cuda_devices=float(torch.cuda.device_count()),
                  pci_bus=bus, seconds=time.time() - started)
