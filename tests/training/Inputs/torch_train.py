#!/usr/bin/python3
"""Makes PyTorch's reference data for a compiled-training test.

    torch_train.py --model mlp|mlp_mse|mlp_nll|mlp_bce|cnn|seg|... --out DIR
        [--steps 20] [--optimizer sgd|adam|adamw] [--lr 0.1]
        [--momentum 0.9] [--dampening 0] [--nesterov] [--weight-decay 0]
        [--betas 0.9,0.999] [--eps 1e-8] [--batch 16] [--seed 0]
        [--class-weights] [--ignore-index N] [--label-smoothing X]
        [--reduction mean|sum] [--clip-grad-norm X]

Models and losses: mlp (Linear, ReLU, Linear; CrossEntropyLoss), mlp_mse
(Linear, Tanh, Linear; MSELoss), mlp_nll (mlp then LogSoftmax; NLLLoss),
mlp_bce (as mlp_mse; BCEWithLogitsLoss against probabilities), cnn (Conv2d
without bias (BatchNorm cancels it: its gradient is rounding noise, which
Adam would scale up to full steps), BatchNorm2d, ReLU, Dropout(0), MaxPool2d, a grouped strided Conv2d, ReLU,
AvgPool2d, AdaptiveAvgPool2d(1), Flatten, Linear; CrossEntropyLoss on
[batch, 3, 12, 12] images), encoder (nn.TransformerEncoderLayer(16, 2, 32,
dropout=0, batch_first=True) on [batch, 6, 16]; MSELoss), gpt2_block (a
pre-LayerNorm block: causal self-attention and a GELU MLP with residuals, on
[batch, 6, 16]; MSELoss), gpt2_lm (token and position embeddings, the
block, a final LayerNorm and a head tied to the token embedding, on [batch,
6] token ids of a 50-token vocabulary; CrossEntropyLoss of the [batch * 6,
50] logits against the next tokens), resnet18 (torchvision's, 5 classes, on [batch, 3,
64, 64]; CrossEntropyLoss), seg (a class per pixel: Conv2d without bias,
BatchNorm2d, ReLU, a 1x1 Conv2d to 5 classes on [batch, 3, 6, 6]; the
K-dimensional CrossEntropyLoss of the [batch, 5, 6, 6] scores against
[batch, 6, 6] targets). --ignore-index sets every fourth target to N.
The state_dicts leave out BatchNorm's num_batches_tracked (PyTorch reads it
only when momentum is None).

Everything follows from --seed (float32 throughout, one fixed batch for every
step). Writes into DIR:
  init.safetensors     the initial state_dict
  x.npy, target.npy    the batch
  loss_weight.npy      CrossEntropyLoss's class weights (--class-weights)
  model.onnx           torch.onnx.export in training mode (warns on failure)
  losses.txt           "step K loss L", L from step K's forward (before its update)
  grads.safetensors    d loss / d parameter at the initial weights
  after1.safetensors   the state_dict after the first step
  final.safetensors    the state_dict after all steps
  eval_y.npy           the trained model's output on x in eval() mode
"""
import argparse
import copy
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st import save_safetensors  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True,
                   choices=["mlp", "mlp_mse", "mlp_nll", "mlp_bce", "cnn", "seg",
                            "encoder", "gpt2_block", "gpt2_lm", "resnet18"])
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam", "adamw"])
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--dampening", type=float, default=0.0)
    p.add_argument("--nesterov", action="store_true")
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--betas", default="0.9,0.999")
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--export-batch", type=int, default=0,
                   help="export the ONNX model for this batch (default "
                        "--batch): one rank's part of a distributed run")
    p.add_argument("--replicas", type=int, default=1,
                   help="forward the batch in this many parts, each with its "
                        "own BatchNorm statistics, and keep part 0's running "
                        "statistics (DataParallel and DDP without "
                        "SyncBatchNorm); the loss is the whole batch's")
    p.add_argument("--class-weights", action="store_true")
    p.add_argument("--ignore-index", type=int, default=None)
    p.add_argument("--label-smoothing", type=float, default=0.0)
    p.add_argument("--reduction", default="mean", choices=["mean", "sum"])
    p.add_argument("--clip-grad-norm", type=float, default=0.0)
    p.add_argument("--accumulate", type=int, default=1,
                   help="K backward calls on the batch per optimizer step; "
                        "losses.txt then has a line per call")
    p.add_argument("--double", action="store_true",
                   help="train in float64 after the export (the same initial "
                        "weights and batch): a reference both float32 runs "
                        "can be measured against")
    return p.parse_args()


class Gpt2Block(nn.Module):
    """GPT-2's block: x + attn(ln_1(x)) under a causal mask, then x +
    mlp(ln_2(x)) with GELU."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        n = x.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.proj(nn.functional.gelu(self.fc(self.ln_2(x))))


class Gpt2Lm(nn.Module):
    """A one-block GPT-2: wte + wpe, the block, ln_f, logits by the tied wte,
    flattened to [batch * positions, vocab]."""

    def __init__(self, vocab=50, d=16, positions=6):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.block = Gpt2Block(d)
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        h = self.ln_f(self.block(self.wte(ids) + self.wpe(pos)))
        return (h @ self.wte.weight.T).reshape(-1, self.wte.weight.shape[0])


def state(model):
    return {k: v.detach().clone().numpy() for k, v in model.state_dict().items()
            if not k.endswith("num_batches_tracked")}


def main():
    a = parse_args()
    os.makedirs(a.out, exist_ok=True)
    out = lambda name: os.path.join(a.out, name)  # noqa: E731
    torch.set_num_threads(1)  # the same sums in the same order on every run
    torch.manual_seed(a.seed)

    loss_weight = None
    classes = a.model in ("mlp", "mlp_nll", "cnn", "seg", "resnet18", "gpt2_lm")
    if a.class_weights and not classes:
        sys.exit("torch_train.py: --class-weights needs a classifier")
    if a.model in ("encoder", "gpt2_block"):
        if a.model == "encoder":
            model = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        else:
            model = Gpt2Block()
        x = torch.randn(a.batch, 6, 16)
    elif a.model == "gpt2_lm":
        model = Gpt2Lm()
        x = torch.randint(0, 50, (a.batch, 6), dtype=torch.int64)
    elif a.model == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(num_classes=5)
        x = torch.randn(a.batch, 3, 64, 64)
    elif a.model == "cnn":
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Dropout(0.0), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2), nn.ReLU(),
            nn.AvgPool2d(2, stride=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(8, 5))
        x = torch.randn(a.batch, 3, 12, 12)
    elif a.model == "seg":
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 5, 1))
        x = torch.randn(a.batch, 3, 6, 6)
    elif a.model in ("mlp", "mlp_nll"):
        layers = [nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5)]
        if a.model == "mlp_nll":
            layers.append(nn.LogSoftmax(dim=1))
        model = nn.Sequential(*layers)
        x = torch.randn(a.batch, 20)
    else:
        model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 4))
        x = torch.randn(a.batch, 20)
    if classes:
        target = torch.randint(0, 5, (a.batch,), dtype=torch.int64)
        if a.model == "gpt2_lm":
            target = torch.roll(x, -1, 1).reshape(-1)
        if a.model == "seg":
            target = torch.randint(0, 5, (a.batch, 6, 6), dtype=torch.int64)
        if a.class_weights:
            loss_weight = torch.rand(5) + 0.5  # in [0.5, 1.5)
        ignore = -100 if a.ignore_index is None else a.ignore_index
        if a.ignore_index is not None:
            target.view(-1)[::4] = a.ignore_index
        if a.model == "mlp_nll":
            loss_fn = nn.NLLLoss(weight=loss_weight, ignore_index=ignore,
                                 reduction=a.reduction)
        else:
            loss_fn = nn.CrossEntropyLoss(weight=loss_weight, ignore_index=ignore,
                                          reduction=a.reduction,
                                          label_smoothing=a.label_smoothing)
    elif a.model in ("encoder", "gpt2_block"):
        target = torch.randn(a.batch, 6, 16)
        loss_fn = nn.MSELoss(reduction=a.reduction)
    elif a.model == "mlp_mse":
        target = torch.randn(a.batch, 4)
        loss_fn = nn.MSELoss(reduction=a.reduction)
    else:
        target = torch.rand(a.batch, 4)
        loss_fn = nn.BCEWithLogitsLoss(reduction=a.reduction)
    model.train()

    save_safetensors(out("init.safetensors"), state(model))
    np.save(out("x.npy"), x.numpy())
    np.save(out("target.npy"), target.numpy())
    if loss_weight is not None:
        np.save(out("loss_weight.npy"), loss_weight.numpy())

    try:
        # --export-batch: the model of one rank of a distributed run (its
        # part of the batch); the training below is on the whole batch.
        rows = a.export_batch or a.batch
        torch.onnx.export(copy.deepcopy(model), (x[:rows],), out("model.onnx"),
                          input_names=["x"], output_names=["y"],
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
    except Exception as e:  # the other files still matter
        print(f"torch_train.py: warning: ONNX export failed: {e!r}", file=sys.stderr)

    if a.double:
        model = model.double()
        x = x.double()
        if target.is_floating_point():
            target = target.double()
        if loss_weight is not None:
            loss_fn.weight = loss_weight.double()
    params = model.parameters()
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=a.lr, momentum=a.momentum,
                              dampening=a.dampening, weight_decay=a.weight_decay,
                              nesterov=a.nesterov)
    else:
        betas = tuple(float(b) for b in a.betas.split(","))
        cls = torch.optim.Adam if a.optimizer == "adam" else torch.optim.AdamW
        opt = cls(params, lr=a.lr, betas=betas, eps=a.eps,
                  weight_decay=a.weight_decay)

    kept = {}

    def forward(inp):
        if a.replicas <= 1:
            return model(inp)
        parts = inp.chunk(a.replicas)
        ys = [model(parts[0])]
        kept.update({n: b.detach().clone() for n, b in model.named_buffers()})
        ys += [model(p) for p in parts[1:]]
        return torch.cat(ys)

    def keep_part0_buffers():
        # After the backward (which reads the running statistics).
        with torch.no_grad():
            for n, b in model.named_buffers():
                if n in kept:
                    b.copy_(kept[n])
        kept.clear()

    # Gradients at the initial weights: one backward, no update.
    loss_fn(forward(x), target).backward()
    keep_part0_buffers()
    save_safetensors(out("grads.safetensors"),
                     {n: p.grad.detach().clone().numpy()
                      for n, p in model.named_parameters()})

    # What the steps start from (that forward updated BatchNorm's running
    # statistics, as the export's trace did those of the initializers;
    # with --export-batch the trace saw only its rows: build with
    # --weights start.safetensors).
    save_safetensors(out("start.safetensors"), state(model))
    with open(out("losses.txt"), "w") as losses:
        call = 0
        for step in range(1, a.steps + 1):
            opt.zero_grad()
            for _ in range(a.accumulate):
                loss = loss_fn(forward(x), target)
                loss.backward()
                keep_part0_buffers()
                call += 1
                losses.write("step %d loss %.9g\n" % (call, loss.item()))
            if a.clip_grad_norm > 0:
                nn.utils.clip_grad_norm_(model.parameters(), a.clip_grad_norm)
            opt.step()
            if step == 1:
                save_safetensors(out("after1.safetensors"), state(model))
    save_safetensors(out("final.safetensors"), state(model))
    # The trained model in eval mode (BatchNorm's running statistics).
    model.eval()
    with torch.no_grad():
        np.save(out("eval_y.npy"), model(x).numpy())


if __name__ == "__main__":
    main()
