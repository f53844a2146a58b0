// Chosen by CMake when Gloo is off or missing: the GLOO engine is then not registered, and the
// plain communication ops say that this build has no Gloo.
#include "distributed/gloo/gloo_availability.h"

namespace caffe2 {

bool GlooAvailable() { return false; }

}  // namespace caffe2
