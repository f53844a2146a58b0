"""ModelTrainerLog: the CSV training log of the Caffe2 trainers.

The file `<expname>_<YYYYmmdd_HHMMSS>.log` in the current directory starts
with `# <runtime_args>`, then a header line
`time_spent,cumulative_time_spent,input_count,cumulative_input_count,
cumulative_batch_count,inputs_per_sec,<sorted extra keys>` written with
the first `log()` call, then one line of `str()` values per call.
"""
import abc
import datetime
import logging
import time
from collections import OrderedDict


class ExternalLogger(object, metaclass=abc.ABCMeta):
    """Receives the runtime args and every logged dict as well."""

    @abc.abstractmethod
    def set_runtime_args(self, runtime_args):
        """Sets the runtime args (e.g. the argparse Namespace)."""

    @abc.abstractmethod
    def log(self, log_dict):
        """Logs one OrderedDict of values."""


class ModelTrainerLog(object):
    """Appends training statistics to `<expname>_<timestamp>.log`."""

    def __init__(self, expname, runtime_args, external_loggers=None):
        now = datetime.datetime.fromtimestamp(time.time())
        self.experiment_id = "{}_{}".format(expname, now.strftime("%Y%m%d_%H%M%S"))
        self.filename = "{}.log".format(self.experiment_id)
        self.logstr("# %s" % str(runtime_args))
        self.headers = None
        self.start_time = time.time()
        self.last_time = self.start_time
        self.last_input_count = 0
        self.external_loggers = None

        if external_loggers is not None:
            self.external_loggers = external_loggers
            if not isinstance(runtime_args, dict):
                runtime_args = dict(vars(runtime_args))
            runtime_args["experiment_id"] = self.experiment_id
            for logger in self.external_loggers:
                logger.set_runtime_args(runtime_args)
        else:
            self.external_loggers = []

    def logstr(self, str):
        with open(self.filename, "a") as f:
            f.write(str + "\n")
        logging.getLogger("experiment_logger").info(str)

    def log(self, input_count, batch_count, additional_values):
        """Writes one line: times, input counts and rates since the previous
        call, then `additional_values` by sorted key (header first time)."""
        logdict = OrderedDict()
        delta_t = time.time() - self.last_time
        delta_count = input_count - self.last_input_count
        self.last_time = time.time()
        self.last_input_count = input_count

        logdict["time_spent"] = delta_t
        logdict["cumulative_time_spent"] = time.time() - self.start_time
        logdict["input_count"] = delta_count
        logdict["cumulative_input_count"] = input_count
        logdict["cumulative_batch_count"] = batch_count
        if delta_t > 0:
            logdict["inputs_per_sec"] = delta_count / delta_t
        else:
            logdict["inputs_per_sec"] = 0.0

        for k in sorted(additional_values.keys()):
            logdict[k] = additional_values[k]

        if self.headers is None:
            self.headers = list(logdict.keys())
            self.logstr(",".join(self.headers))

        self.logstr(",".join(str(v) for v in logdict.values()))

        for logger in self.external_loggers:
            try:
                logger.log(logdict)
            except Exception as e:
                logging.warning("Failed to call ExternalLogger: {}".format(e), e)
