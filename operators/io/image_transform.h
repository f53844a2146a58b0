// The per-image transformation of ImageInput (ops spec §2.4, "Transformation order"): bounding box,
// Inception-style random crop or short-side resize, crop, mirror, colour jitter, PCA lighting and
// per-channel normalization, written as float HWC (BGR) pixels.
#pragma once

#include <opencv2/core.hpp>

#include <random>
#include <string>
#include <vector>

namespace caffe2 {

struct ImageTransformParams {
  int scale = -1;    // resize the short side to this (always when sizes differ)
  int minsize = -1;  // resize the short side to this only when it is smaller
  int random_scale_min = -1, random_scale_max = -1;  // per-image minsize drawn from [min, max]
  bool warp = false;                                 // resize both sides to the target
  int crop = -1;
  bool is_test = false;
  bool mirror = false;
  bool mirror_in_test = false;  // mirror even when is_test (upstream's use_gpu_transform path)
  int scale_jitter_type = 0;    // 1: Inception-style random-sized crop (training only)
  bool color_jitter = false;
  float saturation = 0.4f, brightness = 0.4f, contrast = 0.4f;
  bool color_lighting = false;
  float lighting_std = 0.1f;
  std::vector<float> mean;        // one per output channel, BGR
  std::vector<float> inv_std;     // one per output channel, BGR
  int box[4] = {-1, -1, -1, -1};  // default ymin, xmin, height, width (valid when all >= 0)
};

// Transforms `image` (CV_8UC1 or CV_8UC3) into `out`, crop * crop * channels floats in HWC order.
// `box` (ymin, xmin, height, width) overrides the default box when not null; a box that does not
// fit inside the image is ignored. Throws, naming `where`, when the image ends up smaller than the
// crop.
void TransformImage(const cv::Mat& image, const int* box, const ImageTransformParams& params,
                    std::mt19937* rng, const std::string& where, float* out);

// The geometric part alone (box, resize, crop, mirror; no colour augmentation, no normalization):
// crop * crop * channels bytes in HWC order, the input of the GPU transform. The same generator
// draws give the same window as TransformImage.
struct CropWindow {
  cv::Mat sized;  // the resized image
  int x0, y0;     // the crop's top-left corner in it
  bool flip;      // mirrored horizontally
};
CropWindow CropImage(const cv::Mat& image, const int* box, const ImageTransformParams& params,
                     std::mt19937* rng, const std::string& where);
void CropImageBytes(const cv::Mat& image, const int* box, const ImageTransformParams& params,
                    std::mt19937* rng, const std::string& where, uint8_t* out);

}  // namespace caffe2
