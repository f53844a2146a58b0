#include "operators/io/image_transform.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/enforce.h"

namespace caffe2 {

namespace {

float Uniform(std::mt19937* rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(*rng);
}
int UniformInt(std::mt19937* rng, int lo, int hi) {  // inclusive
  return std::uniform_int_distribution<int>(lo, hi)(*rng);
}

// Inception-style crop: a region of U(0.08, 1) of the area and aspect ratio U(3/4, 4/3), resized to
// crop x crop. Returns false when 10 tries found no region that fits.
bool RandomSizedCrop(const cv::Mat& image, int crop, std::mt19937* rng, cv::Mat* out) {
  const double area = static_cast<double>(image.rows) * image.cols;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * Uniform(rng, 0.08f, 1.0f);
    const double aspect = Uniform(rng, 3.0f / 4.0f, 4.0f / 3.0f);
    int w = static_cast<int>(std::lround(std::sqrt(target * aspect)));
    int h = static_cast<int>(std::lround(std::sqrt(target / aspect)));
    if (Uniform(rng, 0.0f, 1.0f) < 0.5f) std::swap(w, h);
    if (w < 1 || h < 1 || w > image.cols || h > image.rows) continue;
    const int x = UniformInt(rng, 0, image.cols - w);
    const int y = UniformInt(rng, 0, image.rows - h);
    cv::resize(image(cv::Rect(x, y, w, h)), *out, cv::Size(crop, crop), 0, 0, cv::INTER_AREA);
    return true;
  }
  return false;
}

// Short-side resize by scale / minsize / random_scale (ops spec §2.4 step 4).
cv::Mat Resize(const cv::Mat& image, const ImageTransformParams& p, std::mt19937* rng) {
  int target = p.scale > 0 ? p.scale : p.minsize;
  if (p.scale <= 0 && p.random_scale_min > 0) {
    target = UniformInt(rng, p.random_scale_min, p.random_scale_max);
  }
  const int rows = image.rows, cols = image.cols;
  int new_rows, new_cols;
  if (p.warp) {
    new_rows = new_cols = target;
  } else if (rows <= cols) {
    new_rows = target;
    new_cols = static_cast<int>(static_cast<int64_t>(cols) * target / rows);
  } else {
    new_cols = target;
    new_rows = static_cast<int>(static_cast<int64_t>(rows) * target / cols);
  }
  const bool differs = new_rows != rows || new_cols != cols;
  const bool larger = std::min(rows, cols) < target;
  if (!((p.scale > 0 && differs) || (p.scale <= 0 && larger))) return image;
  cv::Mat out;
  cv::resize(image, out, cv::Size(new_cols, new_rows), 0, 0, cv::INTER_AREA);
  return out;
}

void ColorJitter(const ImageTransformParams& p, std::mt19937* rng, float* px, int n) {
  auto gray = [px](int i) {
    return 0.114f * px[3 * i] + 0.587f * px[3 * i + 1] + 0.299f * px[3 * i + 2];
  };
  std::array<int, 3> order{0, 1, 2};
  std::shuffle(order.begin(), order.end(), *rng);
  for (int which : order) {
    if (which == 0) {  // saturation: blend with the pixel's grey value
      const float alpha = 1.0f + Uniform(rng, -p.saturation, p.saturation);
      for (int i = 0; i < n; ++i) {
        const float g = gray(i) * (1.0f - alpha);
        for (int c = 0; c < 3; ++c) px[3 * i + c] = px[3 * i + c] * alpha + g;
      }
    } else if (which == 1) {  // brightness: scale
      const float alpha = 1.0f + Uniform(rng, -p.brightness, p.brightness);
      for (int i = 0; i < 3 * n; ++i) px[i] *= alpha;
    } else {  // contrast: blend with the image's mean grey value
      const float alpha = 1.0f + Uniform(rng, -p.contrast, p.contrast);
      double sum = 0;
      for (int i = 0; i < n; ++i) sum += gray(i);
      const float g = static_cast<float>(sum / n) * (1.0f - alpha);
      for (int i = 0; i < 3 * n; ++i) px[i] = px[i] * alpha + g;
    }
  }
}

// AlexNet PCA lighting noise; the eigenvectors are in RGB order, the pixels BGR.
void ColorLighting(float stddev, std::mt19937* rng, float* px, int n) {
  static const float kEigval[3] = {0.2175f, 0.0188f, 0.0045f};
  static const float kEigvec[3][3] = {
      {-0.5675f, 0.7192f, 0.4009f}, {-0.5808f, -0.0045f, -0.8140f}, {-0.5836f, -0.6948f, 0.4203f}};
  std::normal_distribution<float> normal(0.0f, stddev);
  float alpha[3];
  for (float& a : alpha) a = normal(*rng);
  float delta_bgr[3];
  for (int c = 0; c < 3; ++c) {  // c indexes RGB
    float d = 0;
    for (int i = 0; i < 3; ++i) d += kEigvec[c][i] * alpha[i] * kEigval[i];
    delta_bgr[2 - c] = d;
  }
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) px[3 * i + c] += delta_bgr[c];
  }
}

}  // namespace

CropWindow CropImage(const cv::Mat& input, const int* box, const ImageTransformParams& p,
                     std::mt19937* rng, const std::string& where) {
  cv::Mat image = input;
  const int* b = box ? box : p.box;
  if (b[0] >= 0 && b[1] >= 0 && b[2] > 0 && b[3] > 0 && b[0] + b[2] <= image.rows &&
      b[1] + b[3] <= image.cols) {
    image = image(cv::Rect(b[1], b[0], b[3], b[2]));
  }
  const bool train = !p.is_test;
  const int crop = p.crop;
  cv::Mat sized;
  if (!(train && p.scale_jitter_type == 1 && RandomSizedCrop(image, crop, rng, &sized))) {
    sized = Resize(image, p, rng);
  }
  C2_ENFORCE(sized.rows >= crop && sized.cols >= crop, where, ": the image is ", sized.rows, "x",
             sized.cols, " (height x width) after resizing, smaller than crop ", crop);
  int x0, y0;
  if (train) {
    x0 = UniformInt(rng, 0, sized.cols - crop);
    y0 = UniformInt(rng, 0, sized.rows - crop);
  } else {
    x0 = (sized.cols - crop) / 2;
    y0 = (sized.rows - crop) / 2;
  }
  const bool flip = (train || p.mirror_in_test) && p.mirror && UniformInt(rng, 0, 1) == 1;
  return CropWindow{sized, x0, y0, flip};
}

void TransformImage(const cv::Mat& input, const int* box, const ImageTransformParams& p,
                    std::mt19937* rng, const std::string& where, float* out) {
  const CropWindow window = CropImage(input, box, p, rng, where);
  const cv::Mat& sized = window.sized;
  const int x0 = window.x0, y0 = window.y0;
  const bool flip = window.flip;
  const bool train = !p.is_test;
  const int crop = p.crop;
  const int channels = sized.channels();
  const int n = crop * crop;
  const bool augment = train && channels == 3 && (p.color_jitter || p.color_lighting);
  // Without colour augmentation the pixels are normalized as they are copied (one pass).
  float mean[3] = {0, 0, 0}, inv_std[3] = {1, 1, 1};
  if (!augment) {
    for (int c = 0; c < channels; ++c) {
      mean[c] = p.mean[c];
      inv_std[c] = p.inv_std[c];
    }
  }
  for (int y = 0; y < crop; ++y) {
    const uint8_t* row = sized.ptr<uint8_t>(y0 + y) + x0 * channels;
    float* dst = out + static_cast<size_t>(y) * crop * channels;
    if (channels == 3) {
      for (int x = 0; x < crop; ++x) {
        const uint8_t* src = row + (flip ? crop - 1 - x : x) * 3;
        dst[3 * x] = (src[0] - mean[0]) * inv_std[0];
        dst[3 * x + 1] = (src[1] - mean[1]) * inv_std[1];
        dst[3 * x + 2] = (src[2] - mean[2]) * inv_std[2];
      }
    } else {
      for (int x = 0; x < crop; ++x) dst[x] = (row[flip ? crop - 1 - x : x] - mean[0]) * inv_std[0];
    }
  }
  if (!augment) return;
  if (p.color_jitter) ColorJitter(p, rng, out, n);
  if (p.color_lighting) ColorLighting(p.lighting_std, rng, out, n);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      float& v = out[i * 3 + c];
      v = (v - p.mean[c]) * p.inv_std[c];
    }
  }
}

void CropImageBytes(const cv::Mat& input, const int* box, const ImageTransformParams& p,
                    std::mt19937* rng, const std::string& where, uint8_t* out) {
  const CropWindow window = CropImage(input, box, p, rng, where);
  const int crop = p.crop;
  const int channels = window.sized.channels();
  for (int y = 0; y < crop; ++y) {
    const uint8_t* row = window.sized.ptr<uint8_t>(window.y0 + y) + window.x0 * channels;
    uint8_t* dst = out + static_cast<size_t>(y) * crop * channels;
    for (int x = 0; x < crop; ++x) {
      const uint8_t* src = row + (window.flip ? crop - 1 - x : x) * channels;
      for (int c = 0; c < channels; ++c) dst[x * channels + c] = src[c];
    }
  }
}

}  // namespace caffe2
