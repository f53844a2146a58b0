"""CompleteInTimeOrDie: kill the process when a block runs too long.

    with timeout_guard.CompleteInTimeOrDie(60):
        workspace.RunNet(net)

When the block overruns, the stacks of all threads are logged, SIGINT is
sent to the process, and 10 s later the process aborts. The watcher is
disarmed when the block exits, also by an exception.
"""
import contextlib
import logging
import os
import signal
import sys
import threading
import time
import traceback

log = logging.getLogger("timeout_guard")


def _thread_stacks(only_ident=None):
    """The Python stacks of the live threads (or of one thread)."""
    lines = []
    for ident, frame in sys._current_frames().items():
        if only_ident is not None and ident != only_ident:
            continue
        lines.append("\n# ThreadID: %s" % ident)
        for filename, lineno, name, line in traceback.extract_stack(frame):
            lines.append('File: "%s", line %d, in %s' % (filename, lineno, name))
            if line:
                lines.append("  %s" % line.strip())
    return "\n".join(lines)


class WatcherThread(threading.Thread):
    """Daemon thread that fires unless disarmed within timeout_secs."""

    def __init__(self, timeout_secs):
        threading.Thread.__init__(self)
        self.timeout_secs = timeout_secs
        self.completed = False
        self.condition = threading.Condition()
        self.daemon = True
        self.caller_thread = threading.current_thread()

    def run(self):
        deadline = time.time() + self.timeout_secs
        with self.condition:
            while not self.completed and time.time() < deadline:
                self.condition.wait(deadline - time.time())
        if self.completed:
            return
        log.error("[timeout_guard] Timed out after {} secs".format(self.timeout_secs))
        log.error(
            "[timeout_guard] Stack of the guarded thread:%s",
            _thread_stacks(self.caller_thread.ident),
        )
        print("Caller thread was: {}".format(self.caller_thread))
        # Signal the main thread itself, so that a blocking call there is
        # interrupted too.
        if hasattr(signal, "pthread_kill"):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        else:
            os.kill(os.getpid(), signal.SIGINT)

        def forcequit():
            time.sleep(10.0)
            print("-----After force------")
            print(_thread_stacks())
            log.error("Process did not terminate cleanly in 10 s, forcing")
            os.abort()

        threading.Thread(target=forcequit, daemon=True).start()

    def disarm(self):
        with self.condition:
            self.completed = True
            self.condition.notify()


@contextlib.contextmanager
def CompleteInTimeOrDie(timeout_secs):
    """Runs the block under a watcher that kills the process after
    `timeout_secs`. The watcher stops when the block ends, normally or by
    an exception (which propagates)."""
    restore = _EnsureInterruptible()
    watcher = WatcherThread(timeout_secs)
    watcher.start()
    try:
        yield
    finally:
        watcher.disarm()
        restore()


def _EnsureInterruptible():
    """A process started in the background by a non-interactive shell ignores SIGINT, and Python
    then installs no KeyboardInterrupt handler: the overrun's SIGINT would do nothing. On the main
    thread, installs Python's handler for the guarded block; returns the function that restores the
    old one.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    ):
        return lambda: None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)


def EuthanizeIfNecessary(timeout_secs=120):
    """Call at the end of a process: aborts it if it has not exited within
    `timeout_secs` (e.g. a thread blocks the exit)."""
    watcher = WatcherThread(timeout_secs)
    watcher.start()
