// GlooIoError: a collective or a rendezvous failed on the wire (a peer died, a connection broke, a
// peer did not answer within the timeout). Python sees it as gloo.python.IoError, a RuntimeError.
#pragma once

#include "core/enforce.h"

namespace caffe2 {

class GlooIoError : public EnforceNotMet {
 public:
  using EnforceNotMet::EnforceNotMet;
};

}  // namespace caffe2
