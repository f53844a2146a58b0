"""The package's version, read by pyproject.toml (setuptools' dynamic version) and exported as
caffe2.__version__."""
__version__ = "0.2.0"
