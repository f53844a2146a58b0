"""caffe2.python.serde: alias of caffe2.python.predictor.serde."""
from caffe2.python.predictor.serde import (  # noqa: F401
    deserialize_protobuf_struct,
    serialize_protobuf_struct,
)
