"""The Python training API (docs/training.md, docs/python.md): train_step,
state_dict, save_weights and load_weights on tests/training/Inputs/mlp.ir
compiled with modelc --train (SGD with momentum), one step checked against
a numpy reference of the MLP's gradients."""

import os

import numpy as np
import pytest

import modelc

from conftest import ROOT

MLP_LOSS_IR = os.path.join(ROOT, "tests", "training", "Inputs", "mlp.ir")


@pytest.fixture(scope="session")
def trainer(modelc_tool, workdir):
    """mlp.ir's loss trained by SGD (lr 0.1, momentum 0.9) from random
    weights: (model.so path, the initial weights)."""
    from conftest import read_safetensors
    init = str(workdir / "train-init.safetensors")
    path = modelc.compile(MLP_LOSS_IR, output=str(workdir / "train.so"),
                          random_weights=5,
                          args=["--train", "--optimizer=sgd", "--lr", "0.1",
                                "--momentum", "0.9", "--save-weights", init])
    return path, read_safetensors(init)


def batch():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((16, 20)).astype(np.float32),
            rng.integers(0, 5, 16).astype(np.int64))


def reference_step(w, x, t, lr=0.1):
    """Loss and one SGD step (the first: the momentum buffer is the
    gradient) of Linear(20, 32), ReLU, Linear(32, 5), cross-entropy."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    h = x @ w["0.weight"].T + w["0.bias"]
    a = np.maximum(h, 0)
    y = a @ w["2.weight"].T + w["2.bias"]
    p = np.exp(y - y.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss = -np.log(p[np.arange(len(t)), t]).mean()
    dy = p.copy()
    dy[np.arange(len(t)), t] -= 1
    dy /= len(t)
    grads = {"2.weight": dy.T @ a, "2.bias": dy.sum(0)}
    dh = (dy @ w["2.weight"]) * (h > 0)
    grads["0.weight"] = dh.T @ x
    grads["0.bias"] = dh.sum(0)
    return loss, {k: w[k] - lr * g for k, g in grads.items()}, grads


def test_train_step_matches_numpy(trainer):
    path, init = trainer
    m = modelc.load(path)
    assert m.trains
    x, t = batch()
    loss = m.train_step(x=x, target=t)
    assert isinstance(loss, float)
    expected_loss, expected, grads = reference_step(init, x, t)
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    state = m.state_dict()
    for name, value in expected.items():
        np.testing.assert_allclose(state[name], value, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(state[name + ".momentum_buffer"],
                                   grads[name], rtol=1e-4, atol=1e-6)
    assert state["step"] == 1


def test_state_dict_is_a_copy(trainer):
    m = modelc.load(trainer[0])
    before = m.state_dict()
    m.train_step(*batch())
    after = m.state_dict()
    assert not np.array_equal(before["0.weight"], after["0.weight"])
    assert before["step"] == 0 and after["step"] == 1


def test_save_and_load_resume(trainer, tmp_path):
    x, t = batch()
    m = modelc.load(trainer[0])
    for _ in range(2):
        m.train_step(x, t)
    m.save_weights(tmp_path / "two.safetensors")
    fresh = modelc.load(trainer[0])
    fresh.load_weights(tmp_path / "two.safetensors")
    for name, value in m.state_dict().items():
        np.testing.assert_array_equal(fresh.state_dict()[name], value)
    assert fresh.train_step(x, t) == m.train_step(x, t)


def test_load_weights_errors_change_nothing(trainer, tmp_path):
    from conftest import write_safetensors
    m = modelc.load(trainer[0])
    before = m.state_dict()
    write_safetensors(tmp_path / "bad.safetensors",
                      {"0.weight": np.zeros((3, 3), np.float32)})
    with pytest.raises(modelc.Error, match="0.weight"):
        m.load_weights(tmp_path / "bad.safetensors")
    for name, value in m.state_dict().items():
        np.testing.assert_array_equal(before[name], value)


def test_train_step_needs_a_training_model(mlp):
    m = modelc.load(mlp[0])
    assert not m.trains
    assert m.compute_precision == "f32"
    with pytest.raises(modelc.Error, match="does not train"):
        m.train_step(np.zeros((64, 784), np.float32))


def test_learning_rate_schedule_matches_torch(trainer):
    """train_step(lr=...) per step against torch.optim.SGD whose param
    group's lr the loop sets (as a scheduler does); leaving lr out is the
    compiled rate (0.1)."""
    torch = pytest.importorskip("torch")
    path, init = trainer
    m = modelc.load(path)
    assert "lr" in [s.name for s in m.inputs("train_step")]
    params = {k: torch.tensor(init[k], requires_grad=True)
              for k in ["0.weight", "0.bias", "2.weight", "2.bias"]}
    opt = torch.optim.SGD(params.values(), lr=0.1, momentum=0.9)
    x, t = batch()
    for rate in [0.05, None, 0.3, np.float32(0.01)]:
        loss = m.train_step(x, t) if rate is None else m.train_step(
            x, t, lr=rate)
        for group in opt.param_groups:
            group["lr"] = 0.1 if rate is None else float(rate)
        opt.zero_grad()
        h = torch.relu(torch.from_numpy(x) @ params["0.weight"].T +
                       params["0.bias"])
        y = h @ params["2.weight"].T + params["2.bias"]
        expected = torch.nn.functional.cross_entropy(y, torch.from_numpy(t))
        expected.backward()
        opt.step()
        assert loss == pytest.approx(expected.item(), rel=1e-5)
    state = m.state_dict()
    for name, p in params.items():
        np.testing.assert_allclose(state[name], p.detach().numpy(),
                                   rtol=1e-4, atol=1e-6)


def test_learning_rate_errors(trainer):
    m = modelc.load(trainer[0])
    x, t = batch()
    before = m.state_dict()
    with pytest.raises(modelc.Error, match="'lr'.*f32"):
        m.train_step(x, t, lr=np.ones(2, np.float32))
    with pytest.raises(modelc.Error, match="has no input 'rate'"):
        m.train_step(x, t, rate=0.1)
    for name, value in m.state_dict().items():
        np.testing.assert_array_equal(before[name], value)


def test_async_steps_match_sync_steps(trainer):
    """train_step_async: each call returns at once, the steps run in the
    order they were started (each on the weights the one before wrote), and
    the inputs are copied at the call: 6 steps started before any is
    waited for, over batches the loop overwrites right after each call,
    give the losses and weights of 6 train_step calls, bit for bit."""
    x, t = batch()
    rates = [0.1, 0.05, 0.2, 0.1, 0.01, 0.3]
    sync = modelc.load(trainer[0])
    expected = [sync.train_step(x * (k + 1), t, lr=rate)
                for k, rate in enumerate(rates)]
    m = modelc.load(trainer[0])
    buffer = np.empty_like(x)
    pending = []
    for k, rate in enumerate(rates):
        np.multiply(x, k + 1, out=buffer)
        pending.append(m.train_step_async(buffer, t, lr=rate))
        buffer[:] = np.nan  # the step must have taken its own copy
    losses = [p.wait() for p in pending]
    assert losses == expected
    assert all(p.ready() for p in pending)
    for name, value in sync.state_dict().items():
        np.testing.assert_array_equal(m.state_dict()[name], value)
    with pytest.raises(modelc.Error, match="taken already"):
        pending[0].wait()


def test_async_errors(trainer):
    """A bad input is an Error at the call, and nothing runs; run_async
    gives what run() gives."""
    m = modelc.load(trainer[0])
    x, t = batch()
    before = m.state_dict()
    with pytest.raises(modelc.Error, match="'lr'.*f32"):
        m.train_step_async(x, t, lr=np.ones(2, np.float32))
    with pytest.raises(modelc.Error, match="missing 'target'"):
        m.run_async(x, entry="train_step")
    for name, value in m.state_dict().items():
        np.testing.assert_array_equal(before[name], value)
    loss, *grads = m.run_async(x, t, entry="gradients").wait()
    expected_loss, *expected = m.run(x, t, entry="gradients")
    assert loss == expected_loss
    for g, e in zip(grads, expected):
        np.testing.assert_array_equal(g, e)


MPI_SCRIPT = r"""
import sys
import numpy as np
import modelc
path, data, out = sys.argv[1:4]
m = modelc.load(path, distributed="mpi", collective_timeout=60)
batch = np.load(data)
rows = 16 // m.world_size
part = slice(m.rank * rows, (m.rank + 1) * rows)
losses = [m.train_step(batch["x"][part], batch["t"][part]) for _ in range(3)]
if m.rank == 0:
    np.savez(out, losses=np.array(losses), sums=m.info()["rank_sums"],
             **m.state_dict())
"""


def two_ranks(tmp_path, name, flags, script_text, *outputs, env=None,
              must_succeed=True):
    """Compiles mlp.ir's loss for 8 rows (SGD with momentum, --distributed
    and `flags`) to `name`, writes the 16-row batch and runs `script_text`
    on 2 ranks under mpirun with the model, the batch and `outputs` (and
    the variables of `env` set on every rank); returns the model's path and
    the batch. The job must end with status 0 unless `must_succeed` is
    false (it must end within the timeout either way)."""
    import shutil
    import subprocess
    import sys
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun (apt install openmpi-bin libopenmpi-dev)")
    ir = open(MLP_LOSS_IR).read().replace("16x", "8x")
    half = tmp_path / "mlp8.ir"
    half.write_text(ir)
    path = modelc.compile(str(half), output=str(tmp_path / name),
                          random_weights=5,
                          args=["--train", "--optimizer=sgd", "--lr", "0.1",
                                "--momentum", "0.9", "--distributed"] + flags)
    x, t = batch()
    np.savez(tmp_path / "batch.npz", x=x, t=t)
    script = tmp_path / "rank.py"
    script.write_text(script_text)
    extra = dict(env or {})
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", **extra)
    exports = [a for k in extra for a in ("-x", k)]
    result = subprocess.run(
        ["mpirun", "--oversubscribe", "-np", "2"] + exports +
        [sys.executable, str(script), path, str(tmp_path / "batch.npz")] +
        [str(o) for o in outputs],
        env=env, capture_output=True, text=True, timeout=300)
    assert not must_succeed or result.returncode == 0, \
        result.stdout + result.stderr
    return path, x, t


def test_distributed_under_mpirun(trainer, modelc_tool, workdir, tmp_path):
    """Python started by mpirun (docs/training.md, Data parallel): 2 ranks
    of a --distributed build, each on its 8 rows, take the steps of one
    process on all 16."""
    _, x, t = two_ranks(tmp_path, "dist.so", [], MPI_SCRIPT,
                        tmp_path / "out.npz")
    got = np.load(tmp_path / "out.npz")
    # The CPU plan sums over the ranks on the host: no GPU's rank sums.
    assert str(got["sums"]) == "", str(got["sums"])
    expect_whole_batch(got, trainer, x, t)


def expect_whole_batch(got, trainer, x, t):
    """The losses and parameters of MPI_SCRIPT's 3 steps on 2 ranks are
    one process's on the whole batch."""
    whole = modelc.load(trainer[0])
    expected = [whole.train_step(x, t) for _ in range(3)]
    np.testing.assert_allclose(got["losses"], expected, rtol=1e-5)
    for name, value in whole.state_dict().items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-7,
                                   err_msg=name)


ZERO_SCRIPT = r"""
import sys
import numpy as np
import modelc
path, data, ckpt, out = sys.argv[1:5]
m = modelc.load(path, distributed="mpi", collective_timeout=60)
# The CPU plan sums over the ranks on the host: no GPU's rank sums.
assert m.info()["rank_sums"] == "", m.info()["rank_sums"]
batch = np.load(data)
rows = 16 // m.world_size
part = slice(m.rank * rows, (m.rank + 1) * rows)
losses = [m.train_step(batch["x"][part], batch["t"][part]) for _ in range(3)]
try:  # each rank lacks the other's shards
    m.state_dict()
    raise SystemExit("state_dict read a shard this rank does not hold")
except modelc.Error as e:
    assert "holds (sharded over the ranks), not this one" in str(e), e
m.save_weights(ckpt)  # every rank: the shards come to rank 0
if m.rank == 0:
    np.savez(out, losses=np.array(losses), shards=m.info()["state_shards"])
"""


def test_sharded_state_under_mpirun(trainer, modelc_tool, tmp_path):
    """ZeRO-1 across ranks from Python (--distributed
    --shard-optimizer-state): each rank holds its momentum shards alone
    (reading another's is a modelc.Error naming it), save_weights on every
    rank writes the whole state on rank 0, equal to one process's."""
    ckpt = tmp_path / "zero.safetensors"
    path, x, t = two_ranks(tmp_path, "zero.so", ["--shard-optimizer-state"],
                           ZERO_SCRIPT, ckpt, tmp_path / "out.npz")
    got = np.load(tmp_path / "out.npz")
    assert str(got["shards"]).startswith(
        "sharded over 2 ranks: rank 0 holds 2 of 4 state weights"), \
        str(got["shards"])
    whole = modelc.load(trainer[0])
    expected = [whole.train_step(x, t) for _ in range(3)]
    np.testing.assert_allclose(got["losses"], expected, rtol=1e-5)
    # The checkpoint holds every rank's shards: one process resumes it.
    one = modelc.load(path)
    one.load_weights(ckpt)
    for name, value in whole.state_dict().items():
        np.testing.assert_allclose(one.state_dict()[name], value, rtol=1e-5,
                                   atol=1e-7, err_msg=name)


def emulated_gpu_env(modelc_tool):
    """The variables that give a rank one emulated GPU and NCCL: the test
    suite's stand-in CUDA driver, cuBLASLt and NCCL, next to this build's
    modelc (skips without them)."""
    fixtures = os.path.join(os.path.dirname(os.path.dirname(modelc_tool)),
                            "tests", "fixtures")
    env = {"MODELC_CUDA_DRIVER": os.path.join(fixtures, "fakecuda",
                                              "libcuda.so.1"),
           "MODELC_CUBLASLT": os.path.join(fixtures, "fakecuda",
                                           "libcublasLt.so.13"),
           "MODELC_NCCL": os.path.join(fixtures, "fakenccl", "libnccl.so.2"),
           "FAKE_CUDA_GPUS": "1"}
    if not all(os.path.exists(env[k]) for k in
               ("MODELC_CUDA_DRIVER", "MODELC_CUBLASLT", "MODELC_NCCL")):
        pytest.skip("no stand-in CUDA driver and NCCL in %s" % fixtures)
    return env


def test_gpu_rank_sums_under_mpirun(trainer, modelc_tool, tmp_path):
    """A GPU per rank from Python (emulated: the test suite's stand-in CUDA
    driver): every sum over the ranks on the GPU's copy stream through the
    stand-in NCCL's communicator across the two processes; the losses and
    parameters are one process's on the whole batch, and info() says what
    summed."""
    env = emulated_gpu_env(modelc_tool)
    out = tmp_path / "out.npz"
    _, x, t = two_ranks(tmp_path, "gpu.so",
                        ["--target=h200", "--place-all=cuda:0",
                         "--cuda-emulation"], MPI_SCRIPT, out, env=env)
    got = np.load(out)
    assert str(got["sums"]).startswith("nccl 2.27.3 ("), str(got["sums"])
    assert str(got["sums"]).endswith(") across 2 ranks on cuda:0")
    expect_whole_batch(got, trainer, x, t)


NCCL_FAILS_SCRIPT = r"""
import sys
import numpy as np
import modelc
path, data, out = sys.argv[1:4]
m = modelc.load(path, distributed="mpi", collective_timeout=60)
batch = np.load(data)
part = slice(m.rank * 8, (m.rank + 1) * 8)
x, t = batch["x"][part], batch["t"][part]
if m.rank == 1:
    errors = []
    for _ in range(2):
        try:
            m.train_step(x, t)
        except modelc.Error as e:
            errors.append(str(e))
    np.savez(out, errors=np.array(errors), sums=m.info()["rank_sums"])
    modelc.abort_distributed_run(3)
m.train_step(x, t)  # rank 0 waits in NCCL until the job is aborted
"""


def test_gpu_rank_sums_stop_after_nccl_fails(trainer, modelc_tool, tmp_path):
    """An NCCL call that fails on one rank fails its step naming the op and
    the GPU; the other ranks still sum with NCCL, so that model's later
    steps fail too (no other way meets them), and info() says so."""
    env = emulated_gpu_env(modelc_tool)
    env["FAKE_NCCL_FAIL_ALLREDUCE"] = "rank:1"
    out = tmp_path / "out.npz"
    two_ranks(tmp_path, "gpu.so", ["--target=h200", "--place-all=cuda:0",
                                   "--cuda-emulation"],
              NCCL_FAILS_SCRIPT, out, env=env, must_succeed=False)
    got = np.load(out)
    first, second = (str(e) for e in got["errors"])
    assert "on cuda:0: ncclAllReduce across the ranks failed: " \
        "ncclInternalError (3)" in first, first
    assert "the sums over the ranks stopped after NCCL failed" in second, \
        second
    assert str(got["sums"]).startswith("stopped (NCCL failed: "), \
        str(got["sums"])


ABORT_SCRIPT = r"""
import sys
import numpy as np
import modelc
path, data = sys.argv[1:3]
m = modelc.load(path, distributed="mpi", collective_timeout=120)
batch = np.load(data)
if m.rank == 1:
    # A failure only this rank sees: the others must not wait for it.
    print("rank 1 aborts", flush=True)
    modelc.abort_distributed_run(3)
m.train_step(batch["x"][:8], batch["t"][:8])
"""


def test_abort_distributed_run(trainer, modelc_tool, tmp_path):
    """modelc.abort_distributed_run on one rank ends the whole job at once
    (the other rank waits in a collective with a 120 s timeout)."""
    import shutil
    import subprocess
    import sys
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun (apt install openmpi-bin libopenmpi-dev)")
    ir = open(MLP_LOSS_IR).read().replace("16x", "8x")
    half = tmp_path / "mlp8.ir"
    half.write_text(ir)
    path = modelc.compile(str(half), output=str(tmp_path / "dist.so"),
                          random_weights=5, args=["--train", "--distributed"])
    x, t = batch()
    np.savez(tmp_path / "batch.npz", x=x, t=t)
    script = tmp_path / "abort.py"
    script.write_text(ABORT_SCRIPT)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    # Ends (the timeout below is well under the other rank's 120 s).
    result = subprocess.run(
        ["mpirun", "--oversubscribe", "-np", "2", sys.executable, str(script),
         path, str(tmp_path / "batch.npz")],
        env=env, capture_output=True, text=True, timeout=100)
    # (Open MPI's own MPI_ABORT notice is not checked: its help-message
    # aggregation sometimes fails to print it, "ORTE_ERROR_LOG: Data
    # unpack would read past end of buffer".)
    assert result.returncode != 0
    assert "rank 1 aborts" in result.stdout


def test_distributed_argument_errors(trainer):
    with pytest.raises(ValueError, match='distributed must be None or "mpi"'):
        modelc.load(trainer[0], distributed="nccl")
    # A model built without --distributed cannot join a run.
    with pytest.raises(modelc.Error, match="a distributed run needs a model "
                       "whose steps sum over the ranks"):
        modelc.load(trainer[0], distributed="mpi")


BIG_WEIGHT_IR = """
graph.weight @w : tensor<2048x2048xf32>
func.func @loss(%x: tensor<4x2048xf32>) -> tensor<f32> {
  %w = graph.weight_ref @w : tensor<2048x2048xf32>
  %y = graph.matmul %x, %w : tensor<4x2048xf32>, tensor<2048x2048xf32>
  %l = graph.reduce_mean %y {axes = array<i64: 0, 1>} : tensor<4x2048xf32>
  return %l : tensor<f32>
}
"""


def mapped_rss_kb(path):
    """The resident kilobytes of this process's mappings of `path`."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:
                inside = len(fields) >= 6 and fields[5] == path
            elif inside and fields[0] == "Rss:":
                total += int(fields[1])
    return total


def test_copied_weights_leave_the_mapped_library(modelc_tool, tmp_path):
    """A training model's parameters are copied at load (the copies are
    what steps write); the embedded originals' pages then leave the
    resident set, instead of holding the parameters twice (16 MB here)."""
    ir = tmp_path / "big.ir"
    ir.write_text(BIG_WEIGHT_IR)
    path = modelc.compile(str(ir), output=str(tmp_path / "big.so"),
                          random_weights=1,
                          args=["--train=loss", "--optimizer=sgd", "--lr",
                                "0.1"])
    path = os.path.realpath(path)
    model = modelc.load(path)
    resident = mapped_rss_kb(path)
    assert resident < 4096, "%d KB of big.so resident after load" % resident
    # The copy holds the weights, and steps update it.
    w = model.state_dict()["w"]
    x = np.ones((4, 2048), np.float32)
    model.train_step(x=x)
    assert not np.array_equal(model.state_dict()["w"], w)
