"""Fixtures of the resnet50_trainer tests: small_dbs, a small Fashion-MNIST Datum LMDB pair (train
and test, made with --limit 512), built once per test module."""
import pytest

from resnet50_test_util import make_small_dbs


@pytest.fixture(scope="module")
def small_dbs(tmp_path_factory):
    return make_small_dbs(tmp_path_factory.mktemp("fm"))
