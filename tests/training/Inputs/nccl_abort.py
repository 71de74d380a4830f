"""A step whose NCCL all-reduce fails on one GPU (the stand-in NCCL's
FAKE_NCCL_FAIL_ALLREDUCE=rank:1): the step fails at once, naming the op and
the GPU, rather than the other GPU waiting for ever in the collective; the
communicators are aborted and the next steps of the same model sum through
host memory.

    python3 nccl_abort.py MODEL.so DIR   (DIR holds x.npy and target.npy)
"""
import sys

import numpy as np

import modelc

model = modelc.load(sys.argv[1])
x = np.load(sys.argv[2] + "/x.npy")
target = np.load(sys.argv[2] + "/target.npy")
print("replica sums at load:", model.info()["replica_sums"])
try:
    model.train_step(x=x, target=target)
    print("first step: no error")
except Exception as error:  # modelc.Error
    print("first step:", error)
print("replica sums after:", model.info()["replica_sums"])
for step in range(2):
    loss = model.train_step(x=x, target=target)
    print("step", step + 2, "loss finite:", bool(np.isfinite(loss)))
