"""Trains a linear regression model through the whole stack: nets built with caffe2.python.core,
gradients from the C++ gradient makers via core.AddGradientOperators, SGD with Iter, LearningRate
and WeightedSum, a DAG net executor, a minidb checkpoint with Save/Load, and a Predictor.

    python examples/train_linear_regression.py [--iters 200] [--batch 64] [--lr 0.1]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

FEATURES = 8


def build_nets(batch, base_lr):
    init = core.Net("linreg_init")
    init.GivenTensorFill(
        [],
        "w",
        shape=[1, FEATURES],
        values=np.random.RandomState(1).randn(FEATURES).astype(np.float32) * 0.01,
    )
    init.ConstantFill([], "b", shape=[1], value=0.0)
    init.ConstantFill([], "ONE", shape=[1], value=1.0)
    init.ConstantFill([], "iter", shape=[1], value=0, dtype=core.DataType.INT64)

    train = core.Net("linreg_train")
    train.Proto().type = "dag"
    pred = train.FC(["X", "w", "b"], "pred")
    dist = train.SquaredL2Distance([pred, "target"], "dist")
    loss = train.AveragedLoss(dist, "loss")
    grads = train.AddGradientOperators([loss])
    train.Iter("iter", "iter")
    lr = train.LearningRate("iter", "lr", base_lr=-base_lr, policy="step", stepsize=100, gamma=0.5)
    for param in ["w", "b"]:
        train.WeightedSum([param, "ONE", grads[param], lr], param)
    return init, train


def make_batch(rng, batch, true_w, true_b):
    X = rng.randn(batch, FEATURES).astype(np.float32)
    y = X @ true_w + true_b + 0.01 * rng.randn(batch).astype(np.float32)
    return X, y.reshape(batch, 1).astype(np.float32)


def progress(i, total, loss, width=30):
    done = int(width * (i + 1) / total)
    sys.stdout.write(
        "\r[%s%s] iter %4d/%d  loss %.5f" % ("#" * done, "." * (width - done), i + 1, total, loss)
    )
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    workspace.GlobalInit(["train_linear_regression", "--caffe2_log_level=2"])
    rng = np.random.RandomState(0)
    true_w = rng.randn(FEATURES).astype(np.float32)
    true_b = np.float32(0.5)

    init, train = build_nets(args.batch, args.lr)
    workspace.RunNetOnce(init)
    X, y = make_batch(rng, args.batch, true_w, true_b)
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("target", y)
    workspace.CreateNet(train)

    start = time.time()
    first_loss = None
    for i in range(args.iters):
        X, y = make_batch(rng, args.batch, true_w, true_b)
        workspace.FeedBlob("X", X)
        workspace.FeedBlob("target", y)
        workspace.RunNet(train)
        loss = float(workspace.FetchBlob("loss"))
        first_loss = loss if first_loss is None else first_loss
        if i % 10 == 0 or i + 1 == args.iters:
            progress(i, args.iters, loss)
    elapsed = time.time() - start
    print(
        "\ntrained %d iterations in %.2f s (%.0f samples/s); loss %.5f -> %.5f"
        % (args.iters, elapsed, args.iters * args.batch / elapsed, first_loss, loss)
    )

    w = workspace.FetchBlob("w").ravel()
    b = float(workspace.FetchBlob("b")[0])
    err = float(np.abs(w - true_w).max())
    print("max |w - w_true| = %.4f, b = %.4f (true %.4f)" % (err, b, true_b))

    # Checkpoint to minidb, reload into a fresh workspace, predict with a Predictor.
    tmp = tempfile.mkdtemp(prefix="c2_linreg_")
    db_path = os.path.join(tmp, "params.minidb")
    workspace.RunOperatorOnce(
        core.CreateOperator("Save", ["w", "b"], [], db=db_path, db_type="minidb", absolute_path=1)
    )
    workspace.SwitchWorkspace("reload", True)
    load = core.Net("load_params")
    load.Load([], ["w", "b"], db=db_path, db_type="minidb", absolute_path=1)
    predict = caffe2_pb2.NetDef(
        name="predict", external_input=["X", "w", "b"], external_output=["pred"]
    )
    predict.op.extend([core.CreateOperator("FC", ["X", "w", "b"], ["pred"])])
    predictor = workspace.Predictor(load.Proto(), predict)
    X, y = make_batch(rng, 16, true_w, true_b)
    out = predictor.run([X])[0]
    rmse = float(np.sqrt(np.mean((out - y) ** 2)))
    print("reloaded from %s: test RMSE %.4f" % (db_path, rmse))
    workspace.SwitchWorkspace("default")

    ok = loss < 0.01 * first_loss and err < 0.05 and rmse < 0.05
    print("OK" if ok else "FAILED: the model did not converge")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
