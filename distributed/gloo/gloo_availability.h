// Whether this build has the Gloo ops (gloo_available.cc with libgloo-dev, else no_gloo.cc).
#pragma once

namespace caffe2 {

bool GlooAvailable();

}  // namespace caffe2
