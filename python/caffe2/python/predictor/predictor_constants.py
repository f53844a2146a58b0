"""The predictor's well-known blob and map-key names (PredictorConsts
defaults): predictor_constants.META_NET_DEF == "!!META_NET_DEF", ..."""
from caffe2.proto import predictor_consts_pb2

predictor_constants = predictor_consts_pb2.PredictorConsts()
