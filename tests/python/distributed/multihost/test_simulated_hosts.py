"""The simulated hosts themselves: addresses, host names that resolve, shaped links, cut and heal,
and that nothing is left behind."""
import subprocess
import sys

import pytest

from caffe2.distributed import simulated_hosts

PROBE = """
import socket, sys
name = socket.gethostname()
print(name, socket.gethostbyname(name), socket.gethostbyname(sys.argv[1]))
"""

CONNECT = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], 9), timeout=2).close()
    print("connected")
except ConnectionRefusedError:
    print("refused")  # the host answered: nothing listens on port 9
except OSError as e:
    print("unreachable", e)
"""


def run_on(hosts, i, code, *args):
    cmd = hosts.command(i, [sys.executable, "-c", code] + list(args))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.split()


def test_each_host_has_its_name_and_address(make_hosts):
    hosts = make_hosts(3)
    assert len(set(hosts.addresses)) == 3 and len(set(hosts.hostnames)) == 3
    for i in range(3):
        name, own, other = run_on(hosts, i, PROBE, hosts.hostnames[(i + 1) % 3])
        assert (name, own, other) == (
            hosts.hostnames[i],
            hosts.addresses[i],
            hosts.addresses[(i + 1) % 3],
        )


def test_cut_and_heal_a_link(make_hosts):
    hosts = make_hosts(2, rate="100mbit")
    assert run_on(hosts, 0, CONNECT, hosts.addresses[1]) == ["refused"]
    hosts.cut(1)
    assert run_on(hosts, 0, CONNECT, hosts.addresses[1])[0] == "unreachable"
    hosts.heal(1)
    assert run_on(hosts, 0, CONNECT, hosts.addresses[1]) == ["refused"]


def test_links_are_shaped_both_ways(make_hosts):
    hosts = make_hosts(1, rate="100mbit")
    inside = subprocess.run(
        ["tc", "-n", hosts.namespaces[0], "qdisc", "show", "dev", "eth0"],
        capture_output=True,
        text=True,
    ).stdout
    outside = subprocess.run(
        ["tc", "qdisc", "show", "dev", hosts.ports[0]], capture_output=True, text=True
    ).stdout
    for shown in (inside, outside):
        assert "tbf" in shown and "100Mbit" in shown, shown


def test_close_removes_everything(make_hosts):
    hosts = make_hosts(2)
    hosts.close()
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "link", "show", hosts.bridge], capture_output=True, text=True)
    assert not any(ns in namespaces for ns in hosts.namespaces)
    assert links.returncode != 0  # the bridge is gone


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="cannot read the rate 'fast'"):
        simulated_hosts.SimulatedHosts(2, rate="fast")
    with pytest.raises(ValueError, match="n must be in"):
        simulated_hosts.SimulatedHosts(0)
