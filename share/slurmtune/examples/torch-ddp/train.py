"""A PyTorch DistributedDataParallel MLP on the UCI digits (shipped with scikit-learn),
tuned by slurmtune: every trial is 2 ranks, on one node or two.

Nothing here computes a rendezvous: slurmtune run sets MASTER_ADDR, MASTER_PORT,
WORLD_SIZE and each rank's RANK and LOCAL_RANK, so init_process_group("env://") just
works; every rank reports through slurmtune.distributed and leaves at the same step.
NCCL on GPUs when there are any (one per rank: LOCAL_RANK picks it), gloo otherwise.

    python3 train.py --lr 0.05 --hidden 64 --momentum 0.9 --epochs 20
Needs python3-torch and python3-sklearn (Debian; interpreter /usr/bin/python3).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.nn.parallel import DistributedDataParallel

from slurmtune.distributed import DistributedClient, TrialStopped


def digits(device):
    data = load_digits()
    x = torch.tensor(data.data / 16.0, dtype=torch.float32)
    y = torch.tensor(data.target, dtype=torch.long)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))  # the same split on every rank and every trial
    return (x[:split].to(device), y[:split].to(device)), (x[split:].to(device), y[split:].to(device))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--batch", type=int, default=32, help="per rank")
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    client = DistributedClient.torch()
    torch.manual_seed(1234)  # the same initial weights on every rank
    model = torch.nn.Sequential(torch.nn.Linear(64, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    first_epoch = 1
    resume = client.resume_checkpoint()
    if resume:
        saved = torch.load(resume, map_location=device)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        first_epoch = saved["epoch"] + 1
    ddp = DistributedDataParallel(model, device_ids=[device.index] if cuda else None)
    (x_train, y_train), (x_val, y_val) = digits(device)
    shard = torch.arange(rank, len(x_train), world, device=device)  # this rank's samples

    def save(epoch):
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
        client.save_checkpoint(epoch, "checkpoint.pt", lambda path: torch.save(state, path))

    for epoch in range(first_epoch, args.epochs + 1):
        started = time.perf_counter()
        ddp.train()
        order = shard[torch.randperm(len(shard), generator=torch.Generator().manual_seed(epoch)).to(device)]
        for start in range(0, len(order), args.batch):
            batch = order[start:start + args.batch]
            optimizer.zero_grad()
            F.cross_entropy(ddp(x_train[batch]), y_train[batch]).backward()  # DDP all-reduces
            optimizer.step()
        if cuda:
            torch.cuda.synchronize()
        epoch_s = time.perf_counter() - started  # training only, all-reduces included
        ddp.eval()
        with torch.no_grad():
            logits = model(x_val)
            val_loss = F.cross_entropy(logits, y_val).item()
            val_accuracy = (logits.argmax(1) == y_val).float().mean().item()
        try:
            client.report(step=epoch, val_loss=val_loss, val_accuracy=val_accuracy, epoch_s=epoch_s)
        except TrialStopped as stopped:
            if stopped.checkpoint:
                save(epoch)
            raise
        finally:
            if rank == 0:
                print("epoch %d val_loss %.4f val_accuracy %.4f" % (epoch, val_loss, val_accuracy),
                      flush=True)
        if client.should_checkpoint():
            save(epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
