"""caffe2.python.tools.plot_log: metrics CSVs as the trainer writes them (one per shard, or
several shards in one file) become one PNG of sensible size with something drawn in it; the
default output path; the moving average; and clear errors for a missing file, a file that is not a
metrics log (no header, the trainer's per-epoch log, an empty file, a header without rows), a bad
value, a short row, and a bad --smooth. The command line runs as `python -m`."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import caffe2  # noqa: E402
from caffe2.python.tools import plot_log  # noqa: E402

HEADER = (
    "shard,epoch,iteration,global_iteration,loss,accuracy,learning_rate,images_per_sec,"
    "elapsed_s,test_accuracy"
)
EPOCH_ITERS, EPOCHS = 40, 3


def rows(shard, epochs=EPOCHS, epoch_iters=EPOCH_ITERS):
    """Deterministic rows of one shard: a falling loss, a rising accuracy, a test accuracy in the
    last row of each epoch."""
    out = []
    for epoch in range(epochs):
        for it in range(1, epoch_iters + 1):
            g = epoch * epoch_iters + it
            loss = 2.3 * np.exp(-g / 40.0) + 0.05 * np.sin(g + shard)
            acc = 1.0 - 0.9 * np.exp(-g / 30.0)
            test = "{:.4f}".format(acc - 0.05) if it == epoch_iters else ""
            rate = 1000.0 + 50 * shard + 20 * np.cos(g)
            out.append(
                "{},{},{},{},{:.5f},{:.4f},0.1,{:.1f},{:.3f},{}".format(
                    shard, epoch, it, g, loss, acc, rate, 0.01 * g, test
                )
            )
    return out


def write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def png_size(path):
    """(width, height) from the IHDR chunk; checks the PNG signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def assert_drawn(path):
    width, height = png_size(path)
    assert (width, height) == (1000, 1000)  # 10 x 10 inches at 100 dpi
    assert 20000 < os.path.getsize(path) < 2000000
    import matplotlib.image

    pixels = matplotlib.image.imread(path)
    assert pixels.shape[:2] == (1000, 1000)
    assert pixels[..., :3].std() > 0.05  # lines and text, not a blank page
    # the shards' colours (C0 blue, C1 orange) are both drawn
    rgb = (pixels[..., :3] * 255).astype(int)
    for colour in ((31, 119, 180), (255, 127, 14)):
        assert (np.abs(rgb - colour).sum(axis=-1) < 30).sum() > 500, colour


def test_two_shards_files_to_one_png(tmp_path):
    logs = [
        write(tmp_path / "run_shard{}.metrics.csv".format(s), [HEADER] + rows(s)) for s in (0, 1)
    ]
    out = str(tmp_path / "plots" / "both")
    assert plot_log.main(logs + ["--out", out]) == 0
    assert_drawn(out + ".png")


def test_shards_in_one_file_and_default_output(tmp_path, capsys):
    log = write(tmp_path / "all.metrics.csv", [HEADER] + rows(0) + rows(1))
    assert plot_log.main([log]) == 0
    expected = str(tmp_path / "all.png")
    assert capsys.readouterr().out.strip() == expected
    assert_drawn(expected)


def test_read_log_splits_shards_and_keeps_test_points(tmp_path):
    log = write(tmp_path / "x.csv", [HEADER] + rows(0) + rows(1, epochs=1))
    series = plot_log.read_log(log)
    assert [s["shard"] for s in series] == ["0", "1"]
    assert len(series[0]["loss"]) == EPOCHS * EPOCH_ITERS and len(series[1]["loss"]) == EPOCH_ITERS
    assert series[0]["test"][:, 0].tolist() == [40.0, 80.0, 120.0]
    assert plot_log._epoch_ends(series[0]) == [40.0, 80.0]


def test_minimal_columns_and_an_incomplete_last_row(tmp_path, capsys):
    """Only the four required columns, in another order; a blank line is skipped; the last row cut
    short (a run still writing) is left out with a note."""
    lines = ["images_per_sec,loss,global_iteration,accuracy"]
    lines += ["{},{},{},{}".format(900 + i, 2.0 / i, i, 0.01 * i) for i in range(1, 60)]
    lines += ["950,0.1"]
    lines.insert(10, "")
    log = write(tmp_path / "short.csv", lines)
    series = plot_log.read_log(log)
    assert len(series) == 1 and series[0]["shard"] is None
    assert series[0]["global_iteration"][-1] == 59
    assert len(series[0]["loss"]) == 59
    assert "line 62: incomplete row left out" in capsys.readouterr().err
    png = plot_log.plot_logs([log], smooth=5)
    assert png == str(tmp_path / "short.png") and png_size(png) == (1000, 1000)


def test_moving_average():
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert plot_log.moving_average(values, 1) is values
    np.testing.assert_allclose(plot_log.moving_average(values, 2), [1.0, 1.5, 2.5, 3.5, 4.5])
    np.testing.assert_allclose(plot_log.moving_average(values, 10), [1.0, 1.5, 2.0, 2.5, 3.0])


def error_of(argv, capsys):
    with pytest.raises(SystemExit) as info:
        plot_log.main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("missing.csv", None, "no such file: {dir}/missing.csv"),
        ("empty.csv", "", "empty.csv is empty: expected a metrics log with a header row"),
        (
            "numbers.csv",
            "0,0,1,1,2.3,0.1,0.1,900,0.1,\n",
            "numbers.csv is not a metrics log: its first row must be a header naming the columns "
            "global_iteration, loss, accuracy, images_per_sec (missing: global_iteration, loss, "
            "accuracy, images_per_sec",
        ),
        (
            "resnet50_20260101_000000.log",
            "# Namespace(batch_size=32)\ntime_spent,input_count\n0.5,400\n",
            "is not a metrics log: its first row must be a header",
        ),
        ("header_only.csv", HEADER + "\n", "header_only.csv has a header but no rows"),
        (
            "bad_value.csv",
            "\n".join([HEADER, rows(0)[0], "0,0,2,2,oops,0.5,0.1,900,0.2,", rows(0)[2]]),
            "bad_value.csv, line 3: loss is not a number: 'oops'",
        ),
        (
            "short_row.csv",
            "\n".join([HEADER, "0,0,1,1,2.3", rows(0)[1]]),
            "short_row.csv, line 2: 5 fields, expected 10",
        ),
    ],
)
def test_bad_inputs_are_named(tmp_path, capsys, name, content, expected):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    err = error_of([str(path)], capsys)
    assert err.startswith("plot_log: error: ")
    assert expected.format(dir=tmp_path) in err
    assert not list(tmp_path.glob("*.png"))


def test_one_bad_file_among_good_ones_fails(tmp_path, capsys):
    good = write(tmp_path / "good.metrics.csv", [HEADER] + rows(0))
    err = error_of([good, str(tmp_path / "nope.csv")], capsys)
    assert "no such file" in err and "nope.csv" in err


def test_smooth_must_be_positive(tmp_path, capsys):
    good = write(tmp_path / "good.metrics.csv", [HEADER] + rows(0))
    assert "--smooth must be at least 1" in error_of([good, "--smooth", "0"], capsys)


def test_command_line(tmp_path):
    log = write(tmp_path / "cli.metrics.csv", [HEADER] + rows(0))
    package_root = os.path.dirname(os.path.dirname(caffe2.__file__))  # the package under test
    env = dict(os.environ, PYTHONPATH=package_root)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "caffe2.python.tools.plot_log",
            log,
            "--out",
            str(tmp_path / "o.png"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "o.png")
    assert png_size(str(tmp_path / "o.png")) == (1000, 1000)
    done = subprocess.run(
        [sys.executable, "-m", "caffe2.python.tools.plot_log", str(tmp_path / "none.csv")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "plot_log: error: no such file" in done.stderr
