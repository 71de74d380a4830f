#!/usr/bin/python3
"""A small classifier's data and its accuracy, for tests/training/classifier.test.

    classifier.py make DIR     writes DIR/model.onnx (an MLP exported in
                               training mode), DIR/{train,test}_{x,t}.npy
    classifier.py score Y.npy T.npy MIN
                               prints the accuracy of the logits Y against
                               the classes T; exit status 1 below MIN

The data: 5 classes, each a Gaussian blob in 10 dimensions around a random
centre; 256 training and 256 test samples drawn alike (seeded).
"""
import os
import sys

import numpy as np


def make(out):
    import torch
    from torch import nn
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    centres = rng.normal(0.0, 1.0, (5, 10)) * 1.5

    def draw(n):
        t = rng.integers(0, 5, n)
        x = centres[t] + rng.normal(0.0, 0.9, (n, 10))
        return x.astype(np.float32), t.astype(np.int64)

    for split in ("train", "test"):
        x, t = draw(256)
        np.save(os.path.join(out, f"{split}_x.npy"), x)
        np.save(os.path.join(out, f"{split}_t.npy"), t)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    torch.onnx.export(model, torch.zeros(256, 10), os.path.join(out, "model.onnx"),
                      input_names=["x"], output_names=["y"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)


def score(y_path, t_path, minimum):
    y, t = np.load(y_path), np.load(t_path)
    accuracy = float((y.argmax(1) == t).mean())
    print(f"accuracy {accuracy:.4f}")
    return 0 if accuracy >= minimum else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "score":
        sys.exit(score(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    else:
        sys.exit(__doc__)
