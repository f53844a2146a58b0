"""resnet50_trainer.py as users run it: shards as real processes joined through a file store, on a
small Fashion-MNIST Datum LMDB; checkpoints by shard 0 only, resuming, and a shard killed
mid-run."""
import glob
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TRAINER = os.path.join(ROOT, "examples", "resnet50_trainer.py")
DATA_DIR = "/usr/share/datasets/fashion-mnist"

sys.path.insert(0, os.path.join(ROOT, "examples"))


def env():
    return dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")


@pytest.fixture(scope="module")
def small_dbs(tmp_path_factory):
    if not os.path.exists(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST (Debian dataset-fashion-mnist) is not installed")
    out = tmp_path_factory.mktemp("fm")
    subprocess.check_call(
        [
            sys.executable,
            "-m",
            "caffe2.python.tools.make_fashion_mnist_db",
            "--output_dir",
            str(out),
            "--form",
            "datum",
            "--db",
            "lmdb",
            "--limit",
            "512",
            "--quiet",
        ],
        env=env(),
    )
    return (str(out / "fashion_mnist_train_datum_lmdb"), str(out / "fashion_mnist_test_datum_lmdb"))


def shard_cmd(dbs, store, shard, num_shards, run_id, *extra):
    train, test = dbs
    return [
        sys.executable,
        TRAINER,
        "--train_data",
        train,
        "--test_data",
        test,
        "--num_shards",
        str(num_shards),
        "--shard_id",
        str(shard),
        "--run_id",
        run_id,
        "--file_store_path",
        str(store),
        "--use_cpu",
        "1",
        "--model",
        "resnet",
        "--resnet_blocks",
        "1",
        "--num_channels",
        "1",
        "--image_size",
        "28",
        "--scale",
        "28",
        "--num_labels",
        "10",
        "--batch_size",
        "16",
        "--epoch_size",
        "256",
        "--num_test_iters",
        "4",
        "--base_learning_rate",
        "0.05",
        "--save_model_name",
        "m",
        "--log_dir",
        str(store),
    ] + list(extra)


def run_shards(dbs, store, num_shards, *extra):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            shard_cmd(dbs, store, s, num_shards, run_id, *extra),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    return [p.returncode for p in procs], outs


def test_bool_flags_parse_false():
    import resnet50_trainer

    args = resnet50_trainer.build_parser().parse_args(
        ["--train_data", "null", "--use_cpu", "False", "--model_parallel", "0"]
    )
    assert args.use_cpu is False and args.model_parallel is False
    args = resnet50_trainer.build_parser().parse_args(["--train_data", "null", "--use_cpu", "1"])
    assert args.use_cpu is True


def checkpoint_blobs(path):
    """Every blob of a checkpoint, loaded here (not in the trainer's process)."""
    import numpy as np
    from caffe2.python import core, workspace

    previous = workspace.CurrentWorkspace()
    workspace.SwitchWorkspace("checkpoint_check", True)
    try:
        workspace.ResetWorkspace()
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "Load", [], [], db=path, db_type="minidb", load_all=1, absolute_path=1
            )
        )
        return {
            b: workspace.FetchBlob(b)
            for b in workspace.Blobs()
            if isinstance(workspace.FetchBlob(b), np.ndarray)
        }
    finally:
        workspace.SwitchWorkspace(previous)


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--num_shards", "-3"], "--num_shards must be at least 1, got -3"),
        (
            ["--num_shards", "2", "--shard_id", "2", "--run_id", "r"],
            "--shard_id must be in [0, --num_shards) = [0, 2), got 2",
        ),
        (["--batch_size", "0"], "--batch_size must be at least 1, got 0"),
        (["--base_learning_rate", "-0.1"], "--base_learning_rate must be >= 0, got -0.1"),
    ],
)
def test_nonsense_flags_are_refused(flags, message, capsys):
    import resnet50_trainer

    parser = resnet50_trainer.build_parser()
    args = parser.parse_args(["--train_data", "null"] + flags)
    with pytest.raises(SystemExit) as exit_info:
        resnet50_trainer.check_args(parser, args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_two_shards_train_checkpoint_and_resume(small_dbs, tmp_path):
    codes, outs = run_shards(
        small_dbs,
        tmp_path,
        2,
        "--num_epochs",
        "2",
        "--params_npz",
        str(tmp_path / "params_{shard_id}.npz"),
    )
    assert codes == [0, 0], "\n".join(outs)
    # The checkpoint holds every weight and momentum (not only SpatialBN's statistics), equal to the
    # trainer's own values at the end of the run.
    import numpy as np

    saved = checkpoint_blobs(str(tmp_path / "m_1.mdl"))
    final = np.load(tmp_path / "params_0.npz")
    for name in final.files:
        assert saved["cpu_0/" + name].tobytes() == final[name].tobytes(), name
    assert "cpu_0/conv1_w" in saved and "cpu_0/conv1_w_momentum" in saved
    assert saved["optimizer_iteration"].reshape(-1)[0] == 16
    for out in outs:
        assert "Finished iteration 8/8 of epoch 1" in out
        assert "Final test accuracy" in out
    # shard 0 alone saves, and only the last epoch's checkpoint is kept
    assert sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "*.mdl"))) == ["m_1.mdl"]
    assert "Saved checkpoint" in outs[0] and "Saved checkpoint" not in outs[1]
    logs = glob.glob(str(tmp_path / "*.log"))
    assert logs and "test_accuracy" in open(logs[0]).read()
    # resuming continues with the next epoch and the saved iteration counter
    codes, outs = run_shards(
        small_dbs, tmp_path, 2, "--num_epochs", "3", "--load_model_path", str(tmp_path / "m_1.mdl")
    )
    assert codes == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Resumed at epoch 2 (iteration 16)" in out
        assert "Reader advanced past 256 records" in out
        assert "of epoch 2" in out and "of epoch 0" not in out


def test_two_shards_stay_bitwise_equal_for_20_steps(small_dbs, tmp_path):
    # The main job's model and flags; 20 iterations of a global batch of 32 (docs/determinism.md).
    # Each shard runs 2 kernel threads here, so the processes compete for the cores.
    npz = str(tmp_path / "params_{shard_id}.npz")
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            shard_cmd(
                small_dbs,
                tmp_path,
                s,
                2,
                run_id,
                "--num_epochs",
                "1",
                "--epoch_size",
                "640",
                "--bucket_size_mb",
                "4",
                "--params_npz",
                npz,
            ),
            env=dict(env(), OMP_NUM_THREADS="2"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(2)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Finished iteration 20/20 of epoch 0" in out
    import numpy as np

    a, b = np.load(npz.format(shard_id=0)), np.load(npz.format(shard_id=1))
    assert sorted(a.files) == sorted(b.files)
    assert any(k.endswith("_momentum") for k in a.files) and any(k.endswith("_rm") for k in a.files)
    # SpatialBN's running statistics are each shard's own (computed on its data, as upstream), so
    # they differ; every parameter and momentum is the same to the bit.
    local = [k for k in a.files if k.endswith("_rm") or k.endswith("_riv")]
    assert [k for k in a.files if k not in local and a[k].tobytes() != b[k].tobytes()] == []
    assert all(np.abs(a[k]).max() > 0 for k in a.files if k.endswith("_w_momentum"))  # it trained


def null_cmd(store, shard, num_shards, run_id, *extra):
    """A trainer on synthetic data (--train_data null: one fixed batch, no augmentation)."""
    return [
        sys.executable,
        TRAINER,
        "--train_data",
        "null",
        "--num_shards",
        str(num_shards),
        "--shard_id",
        str(shard),
        "--run_id",
        run_id,
        "--file_store_path",
        str(store),
        "--use_cpu",
        "1",
        "--model",
        "resnet",
        "--resnet_blocks",
        "1",
        "--num_channels",
        "1",
        "--image_size",
        "28",
        "--num_labels",
        "10",
        "--batch_size",
        "8",
        "--epoch_size",
        str(80 * num_shards),
        "--base_learning_rate",
        "0.05",
        "--save_model_name",
        "m",
        "--log_dir",
        str(store),
        "--seed",
        "7",
        "--params_npz",
        str(store / "params_{shard_id}.npz"),
    ] + list(extra)


def run_null(store, num_shards, *extra):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            null_cmd(store, s, num_shards, run_id, *extra),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * num_shards, "\n".join(outs)
    return outs


def run_procs(cmds):
    procs = [
        subprocess.Popen(c, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for c in cmds
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * len(cmds), "\n".join(outs)
    return outs


def lmdb_cmd(dbs):
    """A trainer on the LMDB with ImageInput's random mirroring, seeded (--seed) for comparison."""

    def cmd(store, shard, num_shards, run_id, *extra):
        return shard_cmd(
            dbs,
            store,
            shard,
            num_shards,
            run_id,
            "--seed",
            "7",
            "--params_npz",
            str(store / "params_{shard_id}.npz"),
            *extra
        )

    return cmd


@pytest.mark.parametrize("data", ["null", "lmdb"])
@pytest.mark.parametrize("num_shards", [1, 2])
def test_killed_run_resumes_to_the_same_bits(request, tmp_path, num_shards, data):
    """Kill a run (SIGKILL) once it has a checkpoint, resume it, and compare its parameters and
    momenta after the next epoch with those of a run that was never interrupted. With the LMDB, the
    resumed reader skips the records already read and ImageInput augments each record as before."""
    cmd = null_cmd if data == "null" else lmdb_cmd(request.getfixturevalue("small_dbs"))
    iters_per_epoch = 10 if data == "null" else 256 // (16 * num_shards)
    killed = tmp_path / "killed"
    killed.mkdir()
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            cmd(killed, s, num_shards, run_id, "--num_epochs", "1000"),
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for s in range(num_shards)
    ]
    deadline = time.time() + 120
    try:
        while not glob.glob(str(killed / "m_*.mdl")) and time.time() < deadline:
            time.sleep(0.005)
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
    saved = sorted(glob.glob(str(killed / "m_*.mdl")), key=lambda p: int(p[:-4].rsplit("_", 1)[1]))
    assert saved, "no checkpoint within 120 s"
    epoch = int(saved[-1][:-4].rsplit("_", 1)[1])
    run_id = uuid.uuid4().hex
    outs = run_procs(
        [
            cmd(
                killed,
                s,
                num_shards,
                run_id,
                "--num_epochs",
                str(epoch + 2),
                "--load_model_path",
                saved[-1],
            )
            for s in range(num_shards)
        ]
    )
    assert (
        "Resumed at epoch {} (iteration {})".format(epoch + 1, iters_per_epoch * (epoch + 1))
        in outs[0]
    )

    straight = tmp_path / "straight"
    straight.mkdir()
    run_id = uuid.uuid4().hex
    run_procs(
        [
            cmd(straight, s, num_shards, run_id, "--num_epochs", str(epoch + 2))
            for s in range(num_shards)
        ]
    )
    import numpy as np

    for shard in range(num_shards):
        a, b = np.load(killed / "params_{}.npz".format(shard)), np.load(
            straight / "params_{}.npz".format(shard)
        )
        assert sorted(a.files) == sorted(b.files)
        assert any(k.endswith("_w_momentum") for k in a.files)
        # Every parameter and momentum is the uninterrupted run's, to the bit. So are SpatialBN's
        # running statistics on shard 0. Those of other shards are their own and not checkpointed
        # (only shard 0 saves, as upstream), so with real data they restart from shard 0's.
        local = [k for k in a.files if shard > 0 and data == "lmdb" and k.endswith(("_rm", "_riv"))]
        assert [k for k in a.files if k not in local and a[k].tobytes() != b[k].tobytes()] == []


def test_interrupted_saves_leave_no_partial_files(tmp_path):
    # A partial file of a save killed mid-write (its process is gone) is removed by the next save.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "m_0.mdl.tmp{}".format(dead.pid)
    stale.write_bytes(b"partial")
    run_null(tmp_path, 1, "--num_epochs", "1")
    assert not stale.exists()
    assert glob.glob(str(tmp_path / "*.tmp*")) == []
    assert (tmp_path / "m_0.mdl").exists()


@pytest.mark.parametrize("num_shards", [2, 3])
def test_killed_shard_is_named_and_nobody_hangs(small_dbs, tmp_path, num_shards):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            shard_cmd(small_dbs, tmp_path, s, num_shards, run_id, "--num_epochs", "1000"),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    # wait until training runs, then kill shard 1 without warning
    deadline = time.time() + 120
    seen = ""
    while "Finished iteration 3/" not in seen:
        line = procs[0].stdout.readline()
        assert line and time.time() < deadline, seen
        seen += line
    procs[1].send_signal(signal.SIGKILL)
    t0 = time.time()
    outs = {0: seen + procs[0].communicate(timeout=120)[0]}
    for s in range(1, num_shards):
        outs[s] = procs[s].communicate(timeout=120)[0]
    assert time.time() - t0 < 60  # well inside the 30 s collective timeout + the report grace
    for s in [0] + list(range(2, num_shards)):
        out = outs[s]
        assert procs[s].returncode not in (0, None), out[-3000:]
        assert "IoError" in out and "rank 1 (host" in out and "has exited" in out, out[-3000:]
        assert "Aborted" not in out and "core dumped" not in out


def test_missing_store_directory_is_a_clear_error(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            TRAINER,
            "--train_data",
            "null",
            "--num_shards",
            "2",
            "--run_id",
            "x",
            "--file_store_path",
            str(tmp_path / "nope"),
            "--use_cpu",
            "1",
        ],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "is not a directory" in result.stderr


def test_run_id_is_required_with_shards(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            TRAINER,
            "--train_data",
            "null",
            "--num_shards",
            "2",
            "--file_store_path",
            str(tmp_path),
            "--use_cpu",
            "1",
        ],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "--run_id is required" in result.stderr


def test_main_job_launcher_runs_two_shards(tmp_path):
    if not os.path.exists(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST (Debian dataset-fashion-mnist) is not installed")
    result = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "distributed_fashion_mnist.py"),
            "--data_dir",
            str(tmp_path / "data"),
            "--data_limit",
            "256",
            "--epoch_size",
            "256",
            "--epochs",
            "1",
            "--batch_size",
            "16",
            "--work_dir",
            str(tmp_path / "work"),
            "--print_every",
            "1",
        ],
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "[shard 0] INFO:resnet50_trainer:Finished iteration 8/8 of epoch 0" in out
    assert "[shard 1] INFO:resnet50_trainer:Finished iteration 8/8 of epoch 0" in out
    assert "shard 0: test accuracy" in out and "shard 1: test accuracy" in out
    assert "checkpoints: fashion_resnet_0.mdl" in out


def test_redis_rendezvous_with_two_devices_per_shard(small_dbs, tmp_path, redis_server):
    host, port = redis_server
    codes, outs = run_shards(
        small_dbs,
        tmp_path,
        2,
        "--num_epochs",
        "1",
        "--num_gpus",
        "2",
        "--redis_host",
        host,
        "--redis_port",
        str(port),
    )
    assert codes == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Running on devices: [0, 1]" in out
        assert "Finished iteration 8/8 of epoch 0" in out and "Final test accuracy" in out


def test_learning_rate_schedule_flags():
    import resnet50_trainer

    parse = resnet50_trainer.build_parser().parse_args
    base, lr = resnet50_trainer.learning_rate_args(parse(["--train_data", "null"]), 10)
    assert (base, lr) == (0.1, dict(policy="step", stepsize=300, gamma=0.1))  # upstream
    args = parse(
        [
            "--train_data",
            "null",
            "--lr_step_epochs",
            "2",
            "--lr_linear_scaling",
            "--num_shards",
            "4",
            "--lr_warmup_epochs",
            "0.5",
            "--lr_warmup_start",
            "0.2",
        ]
    )
    base, lr = resnet50_trainer.learning_rate_args(args, 10)
    assert base == pytest.approx(0.4)
    assert lr["policy"] == "composite" and lr["sub_policy_num_iters"] == [5, 1]
    assert lr["sub_policy_0_policy"] == "linearWarmup"
    assert lr["sub_policy_0_start_multiplier"] == 0.2
    assert lr["sub_policy_1_policy"] == "step" and lr["sub_policy_1_stepsize"] == 20


# ---- on GPUs (skip without them) ----


def _num_gpus():
    from caffe2.python import workspace

    return workspace.NumCudaDevices() if workspace.has_gpu_support else 0


def gpu_cmd(dbs, store, shard, num_shards, run_id, *extra):
    cmd = shard_cmd(dbs, store, shard, num_shards, run_id, *extra)
    i = cmd.index("--use_cpu")
    return cmd[:i] + cmd[i + 2 :]


@pytest.mark.skipif(_num_gpus() < 1, reason="no GPU")
@pytest.mark.parametrize(
    "flags",
    [
        ["--dtype", "float"],
        ["--dtype", "float16"],
        ["--dtype", "float16", "--float16_compute", "--dynamic_loss_scale"],
    ],
)
def test_trains_on_a_gpu(small_dbs, tmp_path, flags):
    """cuDNN convolutions, the GPU image transform, fp16 data and fp16 compute with
    FP16MomentumSGDUpdate and dynamic loss scaling."""
    cmd = gpu_cmd(small_dbs, tmp_path, 0, 1, uuid.uuid4().hex, "--num_epochs", "2", *flags)
    out = subprocess.run(
        cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout
    assert "Finished iteration 16/16 of epoch 1" in out.stdout
    assert "Final test accuracy" in out.stdout


@pytest.mark.skipif(_num_gpus() < 2, reason="fewer than 2 GPUs")
def test_two_gpu_shards_join_through_nccl(small_dbs, tmp_path):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            gpu_cmd(small_dbs, tmp_path, s, 2, run_id, "--num_epochs", "1"),
            env=dict(env(), CUDA_VISIBLE_DEVICES=str(s)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(2)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Final test accuracy" in out
