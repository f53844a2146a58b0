"""resnet50_trainer.py's command line: boolean flags, nonsense values refused, the file store and
run id a sharded run needs, and the learning-rate schedule the flags give. The training runs are in
test_resnet50_trainer.py."""
import subprocess
import sys

import pytest

from resnet50_test_util import TRAINER, env


def test_bool_flags_parse_false():
    import resnet50_trainer

    args = resnet50_trainer.build_parser().parse_args(
        ["--train_data", "null", "--use_cpu", "False", "--model_parallel", "0"]
    )
    assert args.use_cpu is False and args.model_parallel is False
    args = resnet50_trainer.build_parser().parse_args(["--train_data", "null", "--use_cpu", "1"])
    assert args.use_cpu is True


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
        (["--checkpoint_every", "-1"], "--checkpoint_every must be >= 0, got -1"),
        (
            ["--resume_latest", "--load_model_path", "m_0.mdl"],
            "--resume_latest and --load_model_path exclude each other",
        ),
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
