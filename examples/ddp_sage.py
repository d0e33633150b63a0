#!/usr/bin/env python3
"""examples/train_sage.py, data-parallel: one process per rank, DistributedDataParallel over
gloo (NCCL with --device cuda, rank r on GPU LOCAL_RANK), each rank's strata.NeighborLoader
taking its share of every epoch's seeds.

    torchrun --nproc-per-node 2 examples/ddp_sage.py DATASET [train_sage.py's options]
    examples/ddp_sage.py --nproc 2 DATASET [...]   (starts the ranks itself, as torchrun does)

The second form is for Debian 12's torch 1.13, whose torchrun fails under Python 3.11 before
it starts any rank. DDP averages the ranks' gradients, so with the same total batch size the ranks train the model
one process would. Rank 0 evaluates and prints the JSON line train_sage.py prints, plus
world_size.
"""

import argparse
import json
import os
import socket
import subprocess
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_sage  # noqa: E402  (the model, the loaders and the loops)


def launch(nproc, argv):
    """Runs this script as ranks 0..nproc-1 on this machine with torchrun's environment."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ranks = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        ranks.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv, env=env))
    return max(abs(r.wait()) for r in ranks)


def main():
    launcher = argparse.ArgumentParser(add_help=False)
    launcher.add_argument("--nproc", type=int, default=0)
    known, rest = launcher.parse_known_args()
    if known.nproc and "RANK" not in os.environ:
        sys.exit(launch(known.nproc, rest))
    args = train_sage.parse_args(rest)
    on_gpu = torch.device(args.device).type == "cuda"
    if on_gpu:
        args.device = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"
        torch.cuda.set_device(args.device)
    dist.init_process_group("nccl" if on_gpu else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    # The machine's cores are shared between the ranks.
    torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // world))
    fanouts = train_sage.fanout_list(args.fanouts, 0)
    # Each rank takes batch_size / world seeds per step, so a step covers batch_size seeds.
    args.batch_size = max(1, args.batch_size // world)
    train = train_sage.loader_for(args, "train", fanouts, rank=rank, world_size=world)
    model = torch.nn.parallel.DistributedDataParallel(
        train_sage.build_model(args, train.dataset, len(fanouts)),
        device_ids=[torch.device(args.device).index] if on_gpu else None)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    epoch_times, losses = [], []
    for epoch in range(args.epochs):
        train.set_epoch(epoch)
        loss, seconds, feed = train_sage.timed_epoch(model, optimizer, train, args.device)
        losses.append(loss)
        epoch_times.append(seconds)
        if rank == 0:
            print(train_sage.epoch_line(epoch, loss, seconds, feed), file=sys.stderr)
    if rank == 0:
        eval_fanouts = train_sage.fanout_list(args.eval_fanouts, len(fanouts))
        args.batch_size = 1024
        val_acc = train_sage.evaluate(model.module, train_sage.loader_for(args, "val", eval_fanouts))
        test_acc = train_sage.evaluate(model.module,
                                       train_sage.loader_for(args, "test", eval_fanouts))
        print(json.dumps({"test_acc": test_acc, "val_acc": val_acc, "epoch_time_s": epoch_times,
                          "train_loss": losses, "world_size": world, "loader": train.stats()}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
