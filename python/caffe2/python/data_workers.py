"""Python-fed input pipelines: worker threads call a user function that
returns numpy arrays, the arrays are cut into batches of `batch_size` and
buffered, and the net reads one batch per run.

    def fetch(worker_id, batch_size):
        return [images, labels]          # one array per input blob

    coordinator = data_workers.init_data_input_workers(
        model.net, ["data", "label"], fetch, batch_size=64)
    coordinator.start()
    ... workspace.RunNet(model.net) ...
    coordinator.stop()

When the `Python` operator is available, a `Python` op that dequeues the
next batch is put at the front of `net`, so every run reads fresh data.
Otherwise, call `coordinator.feed_next_batch()` before each run.
"""
import logging
import queue
import threading
import time

import numpy as np

from caffe2.python import core, scope, workspace

log = logging.getLogger("data_workers")

_global_coordinator = None


class _BatchBuffer(object):
    """Rebatches arrays from the fetchers into batches of exactly
    `batch_size` rows (unless dont_rebatch) on a bounded queue."""

    def __init__(self, num_blobs, batch_size, max_buffered_batches, dont_rebatch):
        self.num_blobs = num_blobs
        self.batch_size = batch_size
        self.dont_rebatch = dont_rebatch
        self.queue = queue.Queue(maxsize=max(1, max_buffered_batches))
        self._pending = [[] for _ in range(num_blobs)]
        self._pending_rows = 0
        self._lock = threading.Lock()

    def put(self, arrays, active):
        if len(arrays) != self.num_blobs:
            raise ValueError(
                "fetch_fun returned {} arrays for {} input blobs".format(
                    len(arrays), self.num_blobs
                )
            )
        arrays = [np.asarray(a) for a in arrays]
        rows = {a.shape[0] if a.ndim else 1 for a in arrays}
        if len(rows) != 1:
            raise ValueError(
                "fetch_fun returned arrays with different first dimensions: "
                "{}".format([a.shape for a in arrays])
            )
        if self.dont_rebatch:
            self._put_batch(arrays, active)
            return
        batches = []
        with self._lock:
            for i, a in enumerate(arrays):
                self._pending[i].append(a)
            self._pending_rows += rows.pop()
            while self._pending_rows >= self.batch_size:
                joined = [np.concatenate(p) for p in self._pending]
                batches.append([j[: self.batch_size] for j in joined])
                self._pending = [[j[self.batch_size :]] for j in joined]
                self._pending_rows -= self.batch_size
        for batch in batches:
            self._put_batch(batch, active)

    def _put_batch(self, batch, active):
        while active():
            try:
                self.queue.put(batch, timeout=0.1)
                return
            except queue.Full:
                continue

    def get(self, timeout):
        return self.queue.get(timeout=timeout)


class DataInputCoordinator(object):
    """Runs the fetcher threads of one input source and hands out
    batches."""

    def __init__(
        self,
        net,
        input_blob_names,
        fetch_fun,
        batch_size,
        num_worker_threads,
        input_source_name,
        max_buffered_batches,
        init_fun,
        external_loggers,
        dont_rebatch,
        timeout,
    ):
        self._net = net
        self._input_blob_names = [str(b) for b in input_blob_names]
        self._fetch_fun = fetch_fun
        self._num_workers = num_worker_threads
        self._input_source_name = input_source_name
        self._init_fun = init_fun
        self._external_loggers = external_loggers or []
        self._timeout = timeout
        self._buffer = _BatchBuffer(
            len(self._input_blob_names), batch_size, max_buffered_batches, dont_rebatch
        )
        self._active = False
        self._workers = []
        self._errors = []
        self._metrics = {"fetched_batches": 0, "fetch_time": 0.0}
        self._metrics_lock = threading.Lock()

    @property
    def input_blob_names(self):
        return list(self._input_blob_names)

    def is_active(self):
        return self._active

    def start(self):
        """Starts the fetcher threads (calls init_fun(coordinator) first)."""
        if self._active:
            return True
        if self._init_fun is not None:
            self._init_fun(self)
        self._active = True
        self._errors = []
        self._workers = [
            threading.Thread(
                target=self._fetch_loop,
                args=(i,),
                name="data_worker_%s_%d" % (self._input_source_name, i),
                daemon=True,
            )
            for i in range(self._num_workers)
        ]
        for w in self._workers:
            w.start()
        return True

    def stop(self):
        """Stops the fetchers and waits for them (at most `timeout` s)."""
        self._active = False
        deadline = time.time() + self._timeout
        for w in self._workers:
            w.join(max(0.0, deadline - time.time()))
        self._workers = []
        return True

    def _fetch_loop(self, worker_id):
        while self._active:
            start = time.time()
            try:
                arrays = self._fetch_fun(worker_id, self._buffer.batch_size)
            except Exception as e:
                log.exception("fetch_fun of worker %d failed", worker_id)
                self._errors.append(e)
                self._active = False
                return
            if arrays is None:  # nothing yet: try again shortly
                time.sleep(0.01)
                continue
            with self._metrics_lock:
                self._metrics["fetched_batches"] += 1
                self._metrics["fetch_time"] += time.time() - start
            try:
                self._buffer.put(arrays, lambda: self._active)
            except ValueError as e:
                self._errors.append(e)
                self._active = False
                return

    def get_next_batch(self, timeout=None):
        """The next batch: a list of arrays, one per input blob. Raises
        RuntimeError when a fetcher failed or none comes within the
        timeout."""
        timeout = self._timeout if timeout is None else timeout
        deadline = time.time() + timeout
        while True:
            if self._errors:
                raise RuntimeError(
                    "data worker of input source {} failed: {}".format(
                        self._input_source_name, self._errors[0]
                    )
                )
            try:
                return self._buffer.get(timeout=min(0.1, max(0.0, deadline - time.time())))
            except queue.Empty:
                if time.time() >= deadline:
                    raise RuntimeError(
                        "no batch of input source {} within {} s (started: "
                        "{})".format(self._input_source_name, timeout, self._active)
                    )

    def feed_next_batch(self, timeout=None):
        """Feeds the next batch into the input blobs of the workspace."""
        for name, array in zip(self._input_blob_names, self.get_next_batch(timeout)):
            workspace.FeedBlob(name, array)

    def get_metrics(self):
        with self._metrics_lock:
            metrics = dict(self._metrics)
        metrics["buffered_batches"] = self._buffer.queue.qsize()
        for logger in self._external_loggers:
            logger.log(metrics)
        return metrics

    def _dequeue_op(self, inputs, outputs):
        for out, array in zip(outputs, self.get_next_batch()):
            if hasattr(out, "feed"):
                out.feed(array)
            else:
                out.reshape(array.shape)
                out.data[...] = array


class GlobalCoordinator(object):
    """Starts and stops every coordinator created in this process."""

    def __init__(self):
        self._coordinators = []

    def add(self, coordinator):
        self._coordinators.append(coordinator)

    def start(self):
        return all(c.start() for c in self._coordinators)

    def stop(self):
        return all(c.stop() for c in self._coordinators)

    def stop_coordinator(self, input_source_name):
        for c in self._coordinators:
            if c._input_source_name == input_source_name:
                c.stop()


def global_coordinator():
    global _global_coordinator
    if _global_coordinator is None:
        _global_coordinator = GlobalCoordinator()
    return _global_coordinator


def init_data_input_workers(
    net,
    input_blob_names,
    fetch_fun,
    batch_size,
    num_worker_threads=2,
    input_source_name="train",
    max_buffered_batches=800,
    init_fun=None,
    external_loggers=None,
    dont_rebatch=False,
    batch_columns=None,
    timeout=600,
):
    """Creates the coordinator of an input source feeding
    `input_blob_names` (scoped by the current NameScope) of `net`.

    fetch_fun(worker_id, batch_size) returns a list of arrays, one per
    blob, whose first dimensions agree (any number of rows: they are
    rebatched to batch_size unless dont_rebatch). batch_columns is not
    supported (every array is batched along its first dimension).
    """
    if batch_columns is not None:
        raise NotImplementedError(
            "batch_columns is not supported: arrays are batched along " "their first dimension"
        )
    names = [
        str(b) if isinstance(b, core.BlobReference) else scope.CurrentNameScope() + b
        for b in input_blob_names
    ]
    coordinator = DataInputCoordinator(
        net,
        names,
        fetch_fun,
        batch_size,
        num_worker_threads,
        input_source_name,
        max_buffered_batches,
        init_fun,
        external_loggers,
        dont_rebatch,
        timeout,
    )
    global_coordinator().add(coordinator)

    if core.IsOperator("Python"):
        proto = net.Proto()
        dequeue_net = core.Net(proto.name + "_dequeue_" + input_source_name)
        dequeue_net.Python(coordinator._dequeue_op)([], [core.BlobReference(n) for n in names])
        ops = list(dequeue_net.Proto().op) + list(proto.op)
        del proto.op[:]
        proto.op.extend(ops)
        # The blobs are made by the dequeue op now, not fed from outside.
        external = [b for b in proto.external_input if b not in names]
        del proto.external_input[:]
        proto.external_input.extend(external)
    return coordinator
