"""Protocol buffer modules of caffe2 (caffe2_pb2, metanet_pb2, ...), generated at build time.

They build their classes in DESCRIPTOR_POOL, a pool of their own, rather than protobuf's default
pool: another package in the same process may register its own, different caffe2.proto there
(PyTorch does), and the modules must keep this project's field names either way.
"""
from google.protobuf import descriptor_pool as _descriptor_pool

DESCRIPTOR_POOL = _descriptor_pool.DescriptorPool()
