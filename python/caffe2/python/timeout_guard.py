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


class WatcherThread(threading.Thread):
    """Daemon thread that fires unless `completed` is set in time."""

    def __init__(self, timeout_secs):
        threading.Thread.__init__(self)
        self.timeout_secs = timeout_secs
        self.completed = False
        self.condition = threading.Condition()
        self.daemon = True
        self.caller_thread = threading.current_thread()

    def run(self):
        started = time.time()
        self.condition.acquire()
        while time.time() - started < self.timeout_secs and \
                not self.completed:
            self.condition.wait(self.timeout_secs - (time.time() - started))
        self.condition.release()
        if not self.completed:
            log.error("[timeout_guard] Timed out after {} secs".format(
                self.timeout_secs))
            log.error("[timeout_guard] Stacks of all threads:")
            code = []
            for threadId, stack in sys._current_frames().items():
                if threadId == self.caller_thread.ident:
                    code.append("\n# ThreadID: %s" % threadId)
                    for filename, lineno, name, line in \
                            traceback.extract_stack(stack):
                        code.append('File: "%s", line %d, in %s' % (
                            filename, lineno, name))
                        if line:
                            code.append("  %s" % (line.strip()))
            log.error("\n".join(code))
            os.kill(os.getpid(), signal.SIGINT)

            def forcequit():
                time.sleep(10.0)
                log.info("Prepared output, dumping threads. ")
                print("Caller thread was: {}".format(self.caller_thread))
                print("-----After force------")
                code = []
                for threadId, stack in sys._current_frames().items():
                    code.append("\n# ThreadID: %s" % threadId)
                    for filename, lineno, name, line in \
                            traceback.extract_stack(stack):
                        code.append('File: "%s", line %d, in %s' % (
                            filename, lineno, name))
                        if line:
                            code.append("  %s" % (line.strip()))
                print("\n".join(code))
                log.error("Process did not terminate cleanly in 10 s, "
                          "forcing")
                os.abort()

            forcet = threading.Thread(target=forcequit, args=())
            forcet.daemon = True
            forcet.start()
            print("Caller thread was: {}".format(self.caller_thread))
            print("-----------------------")

    def disarm(self):
        self.condition.acquire()
        self.completed = True
        self.condition.notify()
        self.condition.release()


@contextlib.contextmanager
def CompleteInTimeOrDie(timeout_secs):
    """Runs the block under a watcher that kills the process after
    `timeout_secs`. The watcher stops when the block ends, normally or by
    an exception (which propagates)."""
    watcher = WatcherThread(timeout_secs)
    watcher.start()
    try:
        yield
    finally:
        watcher.disarm()


def EuthanizeIfNecessary(timeout_secs=120):
    """Call at the end of a process: aborts it if it has not exited within
    `timeout_secs` (e.g. a thread blocks the exit)."""
    watcher = WatcherThread(timeout_secs)
    watcher.start()
