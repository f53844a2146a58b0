"""One process of test_conv_determinism.py: trains a small CNN (convolutions of every rule case:
3x3 stride 1 and 2, 1x1 strided, an RGB input, SpatialBN, FC, softmax loss, momentum SGD) for a few
steps from fixed weights and data, writes every float blob to an .npz, exports the model and
predicts a batch with it; or, given an export, predicts the same batch in this fresh process.

    determinism_worker.py train OUT_DIR [--cache FILE] [--exhaustive]
    determinism_worker.py predict OUT_DIR [--cache FILE]
"""
import argparse
import os

import numpy as np

from caffe2.python import brew, model_helper, optimizer, workspace
from caffe2.python import predictor_exporter as pe

BATCH, PREDICT_BATCH = 8, 5


def forward(model, is_test):
    h = brew.conv(model, "data", "c1", 3, 32, kernel=3, pad=1)
    h = brew.spatial_bn(model, h, "bn1", 32, is_test=is_test)
    h = brew.relu(model, h, h)
    h = brew.conv(model, h, "c2", 32, 32, kernel=3, pad=1)  # 3x3 stride 1: Winograd
    h = brew.relu(model, h, h)
    h = brew.conv(model, h, "c3", 32, 64, kernel=1, stride=2)  # 1x1 strided: GEMM
    h = brew.conv(model, h, "c4", 64, 64, kernel=3, pad=1, stride=2)  # 3x3 stride 2: blocked
    h = brew.average_pool(model, h, "pool", kernel=4)
    h = brew.fc(model, h, "fc", 64, 10)
    return brew.softmax(model, h, "softmax") if is_test else h


def train(out_dir):
    rng = np.random.RandomState(0)
    model = model_helper.ModelHelper(name="det")
    logits = forward(model, is_test=False)
    _, loss = model.net.SoftmaxWithLoss([logits, "label"], ["sm", "loss"])
    model.AddGradientOperators([loss])
    optimizer.build_sgd(model, base_learning_rate=0.05, momentum=0.9)
    workspace.RunNetOnce(model.param_init_net)
    for p in model.params:  # fixed weights, independent of the fills' RNG
        workspace.FeedBlob(
            p, (rng.standard_normal(workspace.FetchBlob(p).shape) * 0.1).astype(np.float32)
        )
    for step in range(3):
        workspace.FeedBlob("data", rng.standard_normal((BATCH, 3, 16, 16)).astype(np.float32))
        workspace.FeedBlob("label", rng.randint(0, 10, BATCH).astype(np.int32))
        if step == 0:
            workspace.CreateNet(model.net)
        workspace.RunNet(model.net)
    blobs = {b: workspace.FetchBlob(b) for b in workspace.Blobs()}
    np.savez(
        os.path.join(out_dir, "train.npz"),
        **{k: v for k, v in blobs.items() if isinstance(v, np.ndarray) and v.dtype == np.float32},
    )

    deploy = model_helper.ModelHelper(name="det_deploy", init_params=False)
    forward(deploy, is_test=True)
    workspace.RunNetOnce(deploy.param_init_net)
    workspace.CreateNet(deploy.net)
    np.save(os.path.join(out_dir, "predict_train.npy"), predict(deploy.net.Proto().name))
    params = [str(p) for p in model.GetAllParams()]
    meta = pe.PredictorExportMeta(
        predict_net=deploy.net.Proto(), parameters=params, inputs=["data"], outputs=["softmax"]
    )
    pe.save_to_db("minidb", os.path.join(out_dir, "model.minidb"), meta)


def predict(net_name):
    data = np.random.RandomState(7).standard_normal((PREDICT_BATCH, 3, 16, 16)).astype(np.float32)
    workspace.FeedBlob("data", data)
    workspace.RunNet(net_name)
    return workspace.FetchBlob("softmax")


def predict_from_export(out_dir):
    net = pe.prepare_prediction_net(os.path.join(out_dir, "model.minidb"), "minidb")
    np.save(os.path.join(out_dir, "predict_loaded.npy"), predict(net.Proto().name))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["train", "predict"])
    parser.add_argument("out_dir")
    parser.add_argument("--cache", default="")
    parser.add_argument("--exhaustive", action="store_true")
    args = parser.parse_args()
    flags = ["worker", "--caffe2_log_level=0", "--caffe2_autotune_cache=" + args.cache]
    if args.exhaustive:
        flags.append("--caffe2_exhaustive_search")
    workspace.GlobalInit(flags)
    if args.mode == "train":
        train(args.out_dir)
    else:
        predict_from_export(args.out_dir)


if __name__ == "__main__":
    main()
