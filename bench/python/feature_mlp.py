"""The features-alone baseline of a Strata dataset: OGB's MLP (3 layers, hidden 256, dropout
0.5, Adam lr 0.01, batch 4096), trained on the train split; prints the test accuracy at the
best validation accuracy. Reads only the split's feature rows (memory-mapped), so a dataset
larger than memory needs no more than its splits' rows. float32 or float16 features.
Usage: feature_mlp.py DATASET [EPOCHS]. Needs numpy and torch."""
import json
import sys

import numpy as np
import torch

d = sys.argv[1]
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
meta = json.load(open(d + '/meta.json'))
n, dim = meta['num_nodes'], meta['feature_dim']
dtype = np.float16 if meta.get('feature_dtype') == 'float16' else np.float32
stride = meta['row_stride_bytes'] // np.dtype(dtype).itemsize
rows = np.memmap(d + '/features.bin', dtype=dtype, mode='r', shape=(n, stride))
labels = np.fromfile(d + '/labels.bin', dtype=np.int32)
ids = np.uint32 if meta.get('node_id_bytes', 4) == 4 else np.uint64
X, y = {}, {}
for s in ['train', 'val', 'test']:
    nodes = np.sort(np.fromfile(f'{d}/split/{s}.bin', dtype=ids).astype(np.int64))
    X[s] = torch.from_numpy(np.asarray(rows[nodes, :dim], dtype=np.float32))
    y[s] = torch.from_numpy(labels[nodes]).long()
torch.manual_seed(0)
torch.set_num_threads(2)
C = meta['num_classes']
m = torch.nn.Sequential(torch.nn.Linear(dim, 256), torch.nn.ReLU(), torch.nn.Dropout(0.5),
                        torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Dropout(0.5),
                        torch.nn.Linear(256, C))
opt = torch.optim.Adam(m.parameters(), lr=0.01)
best = (0, 0)
for e in range(epochs):
    m.train()
    perm = torch.randperm(len(y['train']))
    for i in range(0, len(perm), 4096):
        b = perm[i:i + 4096]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(m(X['train'][b]), y['train'][b]).backward()
        opt.step()
    m.eval()
    with torch.no_grad():
        acc = {s: (m(X[s]).argmax(1) == y[s]).float().mean().item() for s in ['val', 'test']}
    if acc['val'] > best[0]:
        best = (acc['val'], acc['test'])
print(f"MLP val {best[0]:.4f} test {best[1]:.4f}")
