"""timeout_guard: the watcher stops when the block ends, also by an
exception; an overrun interrupts the process."""
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from caffe2.python import timeout_guard

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def watchers():
    return [
        t
        for t in threading.enumerate()
        if isinstance(t, timeout_guard.WatcherThread) and t.is_alive()
    ]


def test_normal_exit_disarms():
    before = len(watchers())
    with timeout_guard.CompleteInTimeOrDie(30):
        assert len(watchers()) == before + 1
    for t in watchers():
        t.join(2)
    assert len(watchers()) == before


def test_exception_disarms_and_propagates():
    before = len(watchers())
    with pytest.raises(KeyError):
        with timeout_guard.CompleteInTimeOrDie(30):
            raise KeyError("boom")
    for t in watchers():
        t.join(2)
    assert len(watchers()) == before


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_overrun_interrupts_the_process(sigint):
    # "ignored": as a process started in the background by a non-interactive shell (CI runners).
    script = textwrap.dedent(
        """
        import time
        from caffe2.python import timeout_guard
        try:
            with timeout_guard.CompleteInTimeOrDie(0.5):
                time.sleep(20)
        except KeyboardInterrupt:
            print("interrupted")
    """
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    import signal

    handler = signal.SIG_IGN if sigint == "ignored" else signal.SIG_DFL
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, handler),
    )
    assert "interrupted" in out.stdout
    assert "Timed out after 0.5 secs" in out.stderr
