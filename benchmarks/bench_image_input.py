"""ImageInput throughput against a plain OpenCV decode-resize-crop loop over the same records.

Builds an LMDB of JPEG records (TensorProtos, like make_image_db), then for 1 and 2 threads measures
images/s of ImageInput (test mode: decode, short side to --scale, centre crop, normalize to float
NHWC) and of a loop doing the same with cv2 (imdecode, resize INTER_AREA, crop, float normalize) on
a thread pool of the same size. Prints the ratio (target: ImageInput >= 90% of the loop) and the
scaling from 1 to 2 threads. OpenCV's own internal threading is switched off for both
(cv2.setNumThreads(1) affects the shared libopencv), so the thread counts are the ones compared.

    python3 benchmarks/bench_image_input.py [--images 512] [--size 400x300] [--batch 32]
        [--scale 256] [--crop 224] [--seconds 6] [--rounds 6]

Needs OpenCV's Python module (Debian: python3-opencv).
"""
import argparse
import concurrent.futures
import os
import shutil
import tempfile
import time

import numpy as np

import cv2
from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import DBWriter, int32_proto, string_proto, tensor_protos_record


def make_db(path, count, width, height):
    rng = np.random.RandomState(0)
    y, x = np.mgrid[0:height, 0:width]
    encoded = []
    with DBWriter("lmdb", path) as writer:
        for i in range(count):
            image = np.stack([(x * (i % 7 + 1)) % 256, (y * 3 + i) % 256, (x + y) % 256], axis=2)
            image = np.clip(image + rng.randint(-20, 20, image.shape), 0, 255).astype(np.uint8)
            ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
            data = jpeg.tobytes()
            encoded.append(data)
            writer.put(b"%08d" % i, tensor_protos_record(string_proto(data), int32_proto(i % 10)))
    return encoded


def image_input_net(path, threads, batch, scale, crop):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb")
    )
    net = core.Net("bench_image_input")
    net.Proto().op.extend(
        [
            core.CreateOperator(
                "ImageInput",
                ["reader"],
                ["data", "label"],
                batch_size=batch,
                scale=scale,
                crop=crop,
                is_test=1,
                mean=128.0,
                std=128.0,
                decode_threads=threads,
            )
        ]
    )
    workspace.CreateNet(net)
    workspace.RunNet(net.Name(), 2)  # warm up: threads started, one batch ahead
    return net.Name()


def bench_image_input(net_name, batch, seconds):
    # The batch prepared while the other side ran is not counted: the clock starts after it.
    workspace.RunNet(net_name)
    start, images = time.time(), 0
    while time.time() - start < seconds:
        workspace.RunNet(net_name)
        images += batch
    rate = images / (time.time() - start)
    time.sleep(1.5 * batch / rate)  # let the batch in flight finish before the loop is timed
    return rate


def opencv_item(data, scale, crop, mean, inv_std):
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    h, w = image.shape[:2]
    nh, nw = (scale, w * scale // h) if h <= w else (h * scale // w, scale)
    image = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    y0, x0 = (nh - crop) // 2, (nw - crop) // 2
    out = np.empty((crop, crop, 3), np.float32)
    np.subtract(image[y0 : y0 + crop, x0 : x0 + crop], mean, out=out, dtype=np.float32)
    out *= inv_std
    return out


def bench_opencv_loop(encoded, threads, batch, scale, crop, seconds):
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        start, images, i = time.time(), 0, 0
        while time.time() - start < seconds:
            chunk = [encoded[(i + k) % len(encoded)] for k in range(batch)]
            i += batch
            out = np.stack(
                list(pool.map(lambda d: opencv_item(d, scale, crop, 128.0, 1.0 / 128), chunk))
            )
            images += len(out)
        return images / (time.time() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=512)
    p.add_argument("--size", default="400x300", help="WIDTHxHEIGHT of the JPEGs")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--scale", type=int, default=256)
    p.add_argument("--crop", type=int, default=224)
    p.add_argument("--seconds", type=float, default=6.0, help="per side and thread count")
    p.add_argument("--rounds", type=int, default=6, help="alternating windows (medians kept)")
    p.add_argument("--threads", default="1,2")
    args = p.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    cv2.setNumThreads(1)
    folder = tempfile.mkdtemp(prefix="bench_image_input_")
    try:
        path = os.path.join(folder, "images_lmdb")
        encoded = make_db(path, args.images, width, height)
        print(
            "%d JPEGs %dx%d, scale %d, crop %d, batch %d, %d CPUs"
            % (args.images, width, height, args.scale, args.crop, args.batch, os.cpu_count())
        )
        print("%-8s %16s %16s %8s" % ("threads", "ImageInput im/s", "OpenCV loop im/s", "ratio"))
        first = {}
        for threads in [int(t) for t in args.threads.split(",")]:
            # Alternate short windows of both and keep the medians, so that load from other
            # processes hits both sides alike.
            net_name = image_input_net(path, threads, args.batch, args.scale, args.crop)
            ours_runs, loop_runs = [], []
            for _ in range(args.rounds):
                ours_runs.append(
                    bench_image_input(net_name, args.batch, args.seconds / args.rounds)
                )
                loop_runs.append(
                    bench_opencv_loop(
                        encoded,
                        threads,
                        args.batch,
                        args.scale,
                        args.crop,
                        args.seconds / args.rounds,
                    )
                )
            workspace.ResetWorkspace()
            ours, loop = float(np.median(ours_runs)), float(np.median(loop_runs))
            first.setdefault("ours", ours)
            first.setdefault("loop", loop)
            print(
                "%-8d %16.1f %16.1f %8.2f   (scaling vs first: ImageInput %.2fx, loop %.2fx)"
                % (threads, ours, loop, ours / loop, ours / first["ours"], loop / first["loop"])
            )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
