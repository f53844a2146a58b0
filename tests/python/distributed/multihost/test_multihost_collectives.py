"""Gloo collectives between simulated hosts (network namespaces on a bridge, each with its own
address and host name), over a Redis store on the network and over a shared-directory store."""
import json
import time
import uuid

import pytest

from multihost_util import start_worker


def outputs(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    return proc.returncode, lines, err


def store_for(kind, hosts, redis_on, tmp_path):
    if kind == "redis":
        return redis_on(hosts).store
    return "file:" + str(tmp_path)


@pytest.mark.parametrize("size", [2, 3])
@pytest.mark.parametrize("kind", ["redis", "file"])
def test_collectives_across_hosts(make_hosts, redis_on, tmp_path, kind, size):
    hosts = make_hosts(size, rate="1gbit")
    store, run_id = store_for(kind, hosts, redis_on, tmp_path), uuid.uuid4().hex
    procs = [start_worker(hosts, r, "collectives", r, size, store, run_id) for r in range(size)]
    for proc in procs:
        rc, lines, err = outputs(proc)
        assert rc == 0, (lines, err)
        assert lines[-1] == {"allreduce_ok": True, "broadcast": [10.0 * (size - 1)] * 3}, lines


@pytest.mark.parametrize("size", [2, 3])
def test_allreduce_algorithms_give_exact_sums(make_hosts, tmp_path, size):
    hosts = make_hosts(size, rate="1gbit")
    store, run_id = "file:" + str(tmp_path), uuid.uuid4().hex
    procs = [start_worker(hosts, r, "algorithms", r, size, store, run_id) for r in range(size)]
    for proc in procs:
        rc, lines, err = outputs(proc)
        assert rc == 0, (lines, err)
        assert lines[-1] and all(lines[-1].values()), lines[-1]


def test_host_name_resolution_without_an_interface(make_hosts, tmp_path):
    """Without --distributed_interfaces each shard listens on the address its host name resolves
    to, which on these hosts is their network address."""
    hosts = make_hosts(2)
    store, run_id = "file:" + str(tmp_path), uuid.uuid4().hex
    procs = [start_worker(hosts, r, "collectives", r, 2, store, run_id, "") for r in range(2)]
    for proc in procs:
        rc, lines, err = outputs(proc)
        assert rc == 0 and lines[-1]["allreduce_ok"], (lines, err)


def test_loopback_interface_with_peers_on_other_hosts_is_refused(make_hosts, tmp_path):
    hosts = make_hosts(3)
    store, run_id = "file:" + str(tmp_path), uuid.uuid4().hex
    procs = [
        start_worker(hosts, r, "collectives", r, 3, store, run_id, "lo" if r == 2 else "eth0")
        for r in range(3)
    ]
    for proc in procs:
        rc, lines, err = outputs(proc)
        assert rc == 3, (lines, err)
        error = lines[-1]["error"]
        assert "rank 2" in error and "loopback" in error, error
        assert "--distributed_interfaces" in error, error


@pytest.mark.parametrize("kind", ["redis", "file"])
def test_cut_link_is_named_by_every_side(make_hosts, redis_on, tmp_path, kind):
    """Host 1's link goes down while both shards live: each side fails within the collective
    timeout (plus the few seconds of the failure-report exchange) and names the other."""
    timeout_ms = 4000
    hosts = make_hosts(2, rate="1gbit")
    store, run_id = store_for(kind, hosts, redis_on, tmp_path), uuid.uuid4().hex
    procs = [
        start_worker(hosts, r, "until_failure", r, 2, store, run_id, timeout_ms=timeout_ms)
        for r in range(2)
    ]
    for proc in procs:  # both are past the rendezvous and reducing
        for line in proc.stdout:
            if '"running"' in line:
                break
    cut_at = time.time()
    hosts.cut(1)
    for rank, proc in enumerate(procs):
        rc, lines, err = outputs(proc)
        elapsed = time.time() - cut_at
        assert rc == 3, (lines, err)
        error = lines[-1]["error"]
        other = 1 - rank
        assert lines[-1]["error_type"] == "gloo.python.IoError", error
        assert "failed on rank {} of 2".format(rank) in error, error
        assert "rank {} (host".format(other) in error, error
        assert elapsed < timeout_ms / 1000.0 + 15, (elapsed, error)


def test_unreachable_redis_at_start_is_a_clear_error(make_hosts, redis_on):
    """A store address where no host answers: the connection attempt times out with the address
    in the message, well before the rendezvous timeout would."""
    hosts = make_hosts(2)
    nobody = hosts.prefix + "77"
    t0 = time.time()
    proc = start_worker(hosts, 0, "collectives", 0, 2, "redis:{}:6379".format(nobody), "r")
    rc, lines, err = outputs(proc)
    assert rc == 3, (lines, err)
    error = lines[-1]["error"]
    assert "Cannot connect to Redis at {}:6379".format(nobody) in error, error
    assert time.time() - t0 < 30


def test_closed_redis_port_is_a_clear_error(make_hosts, redis_on):
    hosts = make_hosts(2)
    server = redis_on(hosts)
    server.kill()
    proc = start_worker(hosts, 0, "collectives", 0, 2, server.store, "r")
    rc, lines, err = outputs(proc)
    assert rc == 3, (lines, err)
    error = lines[-1]["error"]
    assert "Cannot connect to Redis at {}:{}".format(server.address, server.port) in error, error
