"""Simulated hosts on one machine: Linux network namespaces joined by a bridge, for multi-host tests
and benchmarks without a second machine.

Each host is a network namespace with its own loopback, its own host name (`<tag>-host<i>`, which
every host's /etc/hosts resolves) and an interface `eth0` at 10.<a>.<b>.<i+1> (a /24), the far end
of a veth pair whose near end sits in a bridge in the root namespace. The bridge itself holds
10.<a>.<b>.254, so a server started in the root namespace and bound to `bridge_address` (a Redis
store, say) is reachable from every host, as a store on the network would be. The file system is
shared, so a directory stands in for NFS. With `rate` ("1gbit", "100mbit"), each host's link is
shaped in both directions by a token bucket (`tc qdisc ... tbf`): what the host sends leaves
through its eth0 at that rate, and what it receives leaves the bridge port at that rate, as on a
full-duplex link of that speed.

    with SimulatedHosts(2, rate="1gbit") as hosts:
        procs = [hosts.popen(i, ["python", "trainer.py", "--distributed_interfaces", "eth0", ...])
                 for i in range(2)]
        hosts.cut(1)    # pull host 1's cable (the processes live on)

Needs root (CAP_NET_ADMIN) and `ip`/`tc` from iproute2; `unavailable_reason()` says why hosts
cannot be made here, so tests can skip with it. Everything made is removed by `close()` (also on
exit of the `with` block), and names carry this process's id, so concurrent users do not collide.

    python -m caffe2.distributed.simulated_hosts --hosts 2 --rate 1gbit -- CMD...
runs CMD once in the root namespace with C2_SIM_HOSTS="ns1 addr1,ns2 addr2,..." and
C2_SIM_BRIDGE=<bridge address> in its environment, then removes the hosts.
"""
import argparse
import os
import shutil
import subprocess
import sys

_DEFAULT_LATENCY = "50ms"  # how long a packet may wait in the bucket before it is dropped
_RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}


def _bits_per_second(rate):
    """ "1gbit" -> 1e9 (tc's decimal bit units: bit, kbit, mbit, gbit, tbit)."""
    text = rate.strip().lower()
    for suffix, scale in sorted(_RATE_UNITS.items(), key=lambda kv: -len(kv[0])):
        if text.endswith(suffix):
            try:
                return float(text[: -len(suffix)]) * scale
            except ValueError:
                break
    raise ValueError("SimulatedHosts: cannot read the rate {!r} (say 1gbit, 100mbit)".format(rate))


def _burst_for(rate):
    """The token bucket's depth: 1 ms of traffic at the rate, at least 32 KiB. A deep bucket would
    let a whole small message through at the veth's speed (256 KiB is 20 ms at 100 Mbit/s)."""
    return "{}b".format(max(32 << 10, int(_bits_per_second(rate) / 8 / 1000)))


def _run(cmd, check=True):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(
            "simulated hosts: `{}` failed ({}): {}".format(
                " ".join(cmd), result.returncode, result.stderr.strip()
            )
        )
    return result


def unavailable_reason():
    """None when namespaces, veth pairs, a bridge and tbf can be made here; else why not."""
    if os.geteuid() != 0:
        return "simulated hosts need root (network namespaces and veth pairs)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            return "`{}` (iproute2) is not installed".format(tool)
    probe = SimulatedHosts(1, rate="1gbit", name="c2p{}".format(os.getpid() % 100000))
    try:
        probe.open()
    except Exception as e:  # the kernel or container refuses one of the steps
        return "cannot make network namespaces here: {}".format(e)
    finally:
        probe.close()
    return None


class SimulatedHosts(object):
    """`n` hosts in network namespaces on one bridge; see the module doc."""

    _made_count = 0

    def __init__(self, n, rate=None, name=None, burst=None, latency=_DEFAULT_LATENCY):
        if n < 1 or n > 200:
            raise ValueError("SimulatedHosts: n must be in [1, 200], got {}".format(n))
        self.n = n
        self.rate = rate
        self.burst = burst or (_burst_for(rate) if rate else None)
        self.latency = latency
        # Interface names are limited to 15 characters: a short tag per process and instance
        # (a removed veth pair may linger for a moment, so names are never reused).
        SimulatedHosts._made_count += 1
        serial = SimulatedHosts._made_count
        tag = name or "c2{:x}{}".format(os.getpid() % 0x100000, serial)
        self.bridge = tag + "br"
        self.namespaces = ["{}h{}".format(tag, i) for i in range(n)]
        self.ports = ["{}v{}".format(tag, i) for i in range(n)]
        subnet = (os.getpid() * 31 + serial) % (150 * 250)  # 10.100.0.0 to 10.249.249.0
        self.prefix = "10.{}.{}.".format(100 + subnet // 250, subnet % 250)
        self.addresses = [self.prefix + str(i + 1) for i in range(n)]
        self.bridge_address = self.prefix + "254"
        self.hostnames = ["{}-host{}".format(tag, i) for i in range(n)]
        self._made = False

    # ---- making and removing ----------------------------------------------------------------

    def open(self):
        self._made = True
        try:
            _run(["ip", "link", "add", self.bridge, "type", "bridge"])
            _run(["ip", "addr", "add", self.bridge_address + "/24", "dev", self.bridge])
            _run(["ip", "link", "set", self.bridge, "up"])
            for i in range(self.n):
                self._make_host(i)
        except Exception:
            self.close()
            raise
        return self

    def _make_host(self, i):
        ns, port = self.namespaces[i], self.ports[i]
        _run(["ip", "netns", "add", ns])
        _run(["ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns])
        _run(["ip", "link", "set", port, "master", self.bridge])
        _run(["ip", "link", "set", port, "up"])
        inside = ["ip", "-n", ns]
        _run(inside + ["addr", "add", self.addresses[i] + "/24", "dev", "eth0"])
        _run(inside + ["link", "set", "eth0", "up"])
        _run(inside + ["link", "set", "lo", "up"])
        # `ip netns exec` mounts /etc/netns/<ns>/hosts over /etc/hosts: every host name resolves.
        os.makedirs(os.path.join("/etc/netns", ns), exist_ok=True)
        with open(os.path.join("/etc/netns", ns, "hosts"), "w") as f:
            f.write("127.0.0.1 localhost\n")
            for address, hostname in zip(self.addresses, self.hostnames):
                f.write("{} {}\n".format(address, hostname))
        if self.rate:
            shape = ["root", "tbf", "rate", self.rate, "burst", self.burst]
            shape += ["latency", self.latency]
            _run(["tc", "-n", ns, "qdisc", "add", "dev", "eth0"] + shape)  # host -> network
            _run(["tc", "qdisc", "add", "dev", port] + shape)  # network -> host

    def close(self):
        if not self._made:
            return
        self._made = False
        for port, ns in zip(self.ports, self.namespaces):
            _run(["ip", "link", "del", port], check=False)
            _run(["ip", "netns", "del", ns], check=False)  # takes its veth pair with it
            shutil.rmtree(os.path.join("/etc/netns", ns), ignore_errors=True)
        _run(["ip", "link", "del", self.bridge], check=False)

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    # ---- using ------------------------------------------------------------------------------

    def command(self, i, cmd):
        """`cmd` (an argv list) as it runs on host i: in its network namespace, and in a UTS
        namespace of its own whose host name is `hostnames[i]` (so that processes on different
        hosts see different host names, as the rendezvous expects)."""
        set_name = 'hostname "$0" && exec "$@"'
        return (
            ["ip", "netns", "exec", self.namespaces[i], "unshare", "--uts", "--"]
            + [
                "sh",
                "-c",
                set_name,
                self.hostnames[i],
            ]
            + list(cmd)
        )

    def popen(self, i, cmd, **kwargs):
        """Starts `cmd` on host i (subprocess.Popen's keyword arguments pass through)."""
        return subprocess.Popen(self.command(i, cmd), **kwargs)

    def cut(self, i):
        """Takes host i's link down: its packets are lost both ways, its processes live on."""
        _run(["ip", "link", "set", self.ports[i], "down"])

    def heal(self, i):
        _run(["ip", "link", "set", self.ports[i], "up"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=2)
    parser.add_argument("--rate", default=None, help='link rate per host, e.g. "1gbit"')
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        parser.error("give the command to run after --")
    reason = unavailable_reason()
    if reason:
        raise SystemExit(reason)
    with SimulatedHosts(args.hosts, rate=args.rate) as hosts:
        env = dict(
            os.environ,
            C2_SIM_HOSTS=",".join(
                "{} {}".format(ns, a) for ns, a in zip(hosts.namespaces, hosts.addresses)
            ),
            C2_SIM_BRIDGE=hosts.bridge_address,
        )
        return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
