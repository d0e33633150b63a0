"""The features-alone baseline of a Strata dataset: OGB's MLP (3 layers, hidden 256, dropout
0.5, Adam lr 0.01, batch 4096), trained on the train split; prints the test accuracy at the
best validation accuracy. Usage: feature_mlp.py DATASET [EPOCHS]. Needs numpy and torch."""
import json
import sys

import numpy as np
import torch

d = sys.argv[1]
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
meta = json.load(open(d + '/meta.json'))
n, dim = meta['num_nodes'], meta['feature_dim']
stride = meta['row_stride_bytes'] // 4
X = np.fromfile(d + '/features.bin', dtype=np.float32).reshape(n, stride)[:, :dim]
y = np.fromfile(d + '/labels.bin', dtype=np.int32)
idb = meta.get('node_id_bytes', 4)
split = {s: np.fromfile(f'{d}/split/{s}.bin', dtype=np.uint32 if idb == 4 else np.uint64).astype(np.int64) for s in ['train','val','test']}
torch.manual_seed(0); torch.set_num_threads(2)
X = torch.from_numpy(X); y = torch.from_numpy(y).long()
C = int(y.max()) + 1
m = torch.nn.Sequential(torch.nn.Linear(dim,256), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(256,256), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(256,C))
opt = torch.optim.Adam(m.parameters(), lr=0.01)
tr = torch.from_numpy(split['train'])
best = (0, 0)
for e in range(epochs):
    m.train(); perm = tr[torch.randperm(len(tr))]
    for i in range(0, len(perm), 4096):
        b = perm[i:i+4096]; opt.zero_grad(); loss = torch.nn.functional.cross_entropy(m(X[b]), y[b]); loss.backward(); opt.step()
    m.eval()
    with torch.no_grad():
        acc = {s: (m(X[torch.from_numpy(split[s])]).argmax(1) == y[torch.from_numpy(split[s])]).float().mean().item() for s in ['val','test']}
    if acc['val'] > best[0]: best = (acc['val'], acc['test'])
print(f"MLP val {best[0]:.4f} test {best[1]:.4f}")
