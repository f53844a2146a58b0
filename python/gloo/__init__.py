"""gloo: the Python names upstream Caffe2 exported for Gloo
(``from gloo.python import IoError``)."""
