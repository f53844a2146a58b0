"""Fixtures of the multi-host tests: simulated hosts (network namespaces on a bridge, see
caffe2.distributed.simulated_hosts) and a Redis server on the bridge, reachable from every host.

Where namespaces cannot be made (not root, no iproute2) the tests skip with the reason; under CI
(CI=true) that is a failure instead, so CI never silently drops them.
"""
import os

import pytest

from caffe2.distributed import simulated_hosts
from multihost_util import RedisOnBridge

_reason = []


def _unavailable():
    if not _reason:
        _reason.append(simulated_hosts.unavailable_reason())
    return _reason[0]


@pytest.fixture
def make_hosts():
    """make_hosts(n, rate=None) -> open SimulatedHosts, removed after the test."""
    reason = _unavailable()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("multi-host tests must run in CI: " + reason)
        pytest.skip(reason)
    made = []

    def make(n, rate=None):
        hosts = simulated_hosts.SimulatedHosts(n, rate=rate).open()
        made.append(hosts)
        return hosts

    yield make
    for hosts in made:
        hosts.close()


@pytest.fixture
def redis_on():
    """redis_on(hosts) -> a RedisOnBridge on that bridge, stopped after the test."""
    servers = []

    def start(hosts):
        servers.append(RedisOnBridge(hosts.bridge_address))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
