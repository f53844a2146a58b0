#include "distributed/gloo/gloo_availability.h"

namespace caffe2 {

bool GlooAvailable() { return true; }

}  // namespace caffe2
