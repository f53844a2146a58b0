"""examples/resnet50_trainer.py with one shard per simulated host (its own address, host name and
1 Gbit/s link), as users run it across machines: `--distributed_interfaces eth0`, a Redis store on
the network or a shared directory."""
import os
import subprocess
import sys
import time
import uuid

import pytest

from multihost_util import python_env

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from resnet50_test_util import make_small_dbs, shard_cmd  # noqa: E402


@pytest.fixture(scope="module")
def small_dbs(tmp_path_factory):
    return make_small_dbs(str(tmp_path_factory.mktemp("fm")))


class Shard(object):
    """One trainer process on a simulated host; its output goes to a file (a pipe nobody reads
    while the test waits on another shard would fill up and stall the shard)."""

    def __init__(self, hosts, host, cmd, log_path):
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.proc = hosts.popen(
                host, cmd, env=python_env(), stdout=log, stderr=subprocess.STDOUT, text=True
            )

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_for(self, text, timeout=300):
        deadline = time.time() + timeout
        while text not in self.output():
            assert self.proc.poll() is None, self.output()[-3000:]
            assert time.time() < deadline, "no {!r} within {} s".format(text, timeout)
            time.sleep(0.2)


def start_shards(hosts, dbs, store_dir, num_shards, *extra):
    run_id = uuid.uuid4().hex[:12]
    flags = ["--distributed_interfaces", "eth0", "--num_epochs", "2"] + list(extra)
    return [
        Shard(
            hosts,
            shard,
            shard_cmd(dbs, store_dir, shard, num_shards, run_id, *flags),
            os.path.join(str(store_dir), "shard{}.out".format(shard)),
        )
        for shard in range(num_shards)
    ]


def finish(shards, timeout=600):
    for shard in shards:
        shard.proc.wait(timeout=timeout)
    outs = [shard.output() for shard in shards]
    for k, (shard, out) in enumerate(zip(shards, outs)):
        assert shard.proc.returncode == 0, "shard {}:\n{}".format(k, out[-3000:])
        assert "Final test accuracy" in out, out[-3000:]
    return outs


def test_two_hosts_train_over_a_shared_directory(make_hosts, small_dbs, tmp_path):
    hosts = make_hosts(2, rate="1gbit")
    finish(start_shards(hosts, small_dbs, tmp_path, 2))
    assert os.path.exists(os.path.join(str(tmp_path), "m_1.mdl"))


def test_three_hosts_over_redis_train_on_after_redis_dies(
    make_hosts, redis_on, small_dbs, tmp_path
):
    """Redis is only needed for the rendezvous: killed once every shard has trained an iteration,
    the run goes on and finishes."""
    hosts = make_hosts(3, rate="1gbit")
    server = redis_on(hosts)
    redis = ["--redis_host", server.address, "--redis_port", str(server.port)]
    shards = start_shards(hosts, small_dbs, tmp_path, 3, *redis)
    for shard in shards:
        shard.wait_for("iter 1/")
    server.kill()
    outs = finish(shards)
    for out in outs:
        assert "epoch 2/2 iter 5/5 |" in out, out[-2000:]
