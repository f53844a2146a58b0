#include "operators/io/image_input_op.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "core/context.h"
#include "core/gradient.h"

namespace caffe2 {

namespace {

DataType ParseOutputType(const OperatorBase& op) {
  if (op.HasSingleArgumentOfType<std::string>("output_type")) {
    std::string name = op.GetSingleArgument<std::string>("output_type", "float");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (name == "float") return DataType::FLOAT;
    if (name == "float16") return DataType::FLOAT16;
    C2_THROW("output_type must be \"float\" or \"float16\", got \"", name, "\"");
  }
  const int type = op.GetSingleArgument<int>("output_type", static_cast<int>(DataType::FLOAT));
  C2_ENFORCE(
      type == static_cast<int>(DataType::FLOAT) || type == static_cast<int>(DataType::FLOAT16),
      "output_type must be FLOAT (1) or FLOAT16 (12), got ", type);
  return static_cast<DataType>(type);
}

// Per-channel mean or std: the list form, else the scalar form; replicated to `channels` values.
std::vector<float> PerChannel(const OperatorBase& op, const char* list_name,
                              const char* scalar_name, float scalar_default, int channels) {
  std::vector<float> values = op.GetRepeatedArgument<float>(list_name);
  if (values.empty()) values = {op.GetSingleArgument<float>(scalar_name, scalar_default)};
  C2_ENFORCE(values.size() == 1 || values.size() == 3, list_name, " must hold 1 or 3 values, got ",
             values.size());
  if (values.size() == 1) values.assign(3, values[0]);
  values.resize(channels);
  return values;
}

// Waits for a set of tasks and keeps the first exception any of them threw.
class TaskGroup {
 public:
  explicit TaskGroup(int n) : pending_(n) {}
  void Done(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) error_ = error;
    if (--pending_ == 0) cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return pending_ == 0; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int pending_;
  std::exception_ptr error_;
};

// The seed of one record's generator: SplitMix64 of the op's seed and the record's read index, so
// neighbouring indices get unrelated streams.
uint32_t RecordSeed(uint64_t op_seed, int64_t read_index) {
  uint64_t z = op_seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(read_index) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

template <class T>
void WriteRow(const ValueRow& row, T* dst) {
  for (size_t k = 0; k < row.values.size(); ++k) dst[k] = static_cast<T>(row.values[k]);
}

// Writes `rows` (one per batch item) into `out`, typed like the first row.
void FillRows(const std::vector<const ValueRow*>& rows, int64_t width, bool vector_shape,
              Tensor* out) {
  const int64_t n = static_cast<int64_t>(rows.size());
  if (vector_shape) {
    out->Resize(n);
  } else {
    out->Resize(n, width);
  }
  const DataType type = rows[0]->type;
  for (int64_t i = 0; i < n; ++i) {
    if (type == DataType::FLOAT) {
      WriteRow(*rows[i], out->mutable_data<float>() + i * width);
    } else if (type == DataType::INT64) {
      WriteRow(*rows[i], out->mutable_data<int64_t>() + i * width);
    } else {
      WriteRow(*rows[i], out->mutable_data<int32_t>() + i * width);
    }
  }
}

// Shapes from the arguments. The label and extra types depend on the records; the label is
// reported as INT32 (FLOAT for weighted sparse labels), extras as FLOAT.
std::vector<TensorShape> ImageInputInference(const OperatorDef& def,
                                             const std::vector<TensorShape>&) {
  ArgumentHelper args(def);
  const int64_t batch = args.GetSingleArgument<int>("batch_size", 0);
  const int64_t crop = args.GetSingleArgument<int>("crop", -1);
  const int64_t channels = args.GetSingleArgument<int>("color", 1) ? 3 : 1;
  const int label_type = args.GetSingleArgument<int>("label_type", SINGLE_LABEL);
  const bool nchw = def.device_option().device_type() == kCUDA &&
                    args.GetSingleArgument<int>("use_gpu_transform", 0) != 0;
  bool half = false;
  if (args.HasSingleArgumentOfType<std::string>("output_type")) {
    std::string name = args.GetSingleArgument<std::string>("output_type", "float");
    half = name == "float16" || name == "FLOAT16";
  } else {
    half = args.GetSingleArgument<int>("output_type", 1) == static_cast<int>(DataType::FLOAT16);
  }
  std::vector<TensorShape> out(def.output_size());
  out[0].set_data_type(half ? TensorProto::FLOAT16 : TensorProto::FLOAT);
  for (int64_t d : nchw ? std::vector<int64_t>{batch, channels, crop, crop}
                        : std::vector<int64_t>{batch, crop, crop, channels}) {
    out[0].add_dims(d);
  }
  out[1].add_dims(batch);
  if (label_type != SINGLE_LABEL && label_type != SINGLE_LABEL_WEIGHTED) {
    out[1].add_dims(args.GetSingleArgument<int>("num_labels", 0));
  }
  out[1].set_data_type(label_type == MULTI_LABEL_WEIGHTED_SPARSE ? TensorProto::FLOAT
                                                                 : TensorProto::INT32);
  const std::vector<int> sizes =
      args.GetRepeatedArgument<int>("output_sizes", std::vector<int>(def.output_size() - 2, 1));
  for (int i = 2; i < def.output_size() && i - 2 < static_cast<int>(sizes.size()); ++i) {
    out[i].add_dims(batch);
    out[i].add_dims(sizes[i - 2]);
  }
  return out;
}

}  // namespace

ImageInputOp::ImageInputOp(const OperatorDef& def, Workspace* ws)
    : PrefetchOperator(def, ws), batch_size_(GetSingleArgument<int>("batch_size", 0)) {
  C2_ENFORCE(batch_size_ > 0, "batch_size must be > 0, got ", batch_size_);
  format_.use_caffe_datum = GetSingleArgument<bool>("use_caffe_datum", false);
  format_.color = GetSingleArgument<int>("color", 1) != 0;
  format_.label_type = GetSingleArgument<int>("label_type", SINGLE_LABEL);
  format_.num_labels = GetSingleArgument<int>("num_labels", 0);
  channels_ = format_.color ? 3 : 1;
  const int lt = format_.label_type;
  C2_ENFORCE(lt >= SINGLE_LABEL && lt <= SINGLE_LABEL_WEIGHTED, "label_type must be 0 to 4, got ",
             lt);
  C2_ENFORCE(lt == SINGLE_LABEL || lt == SINGLE_LABEL_WEIGHTED || format_.num_labels > 0,
             "label_type ", lt, " needs num_labels > 0, got ", format_.num_labels);
  C2_ENFORCE(OutputSize() >= 2, "ImageInput needs at least 2 outputs (data, label), got ",
             OutputSize());
  if (format_.use_caffe_datum) {
    C2_ENFORCE(lt == SINGLE_LABEL || lt == SINGLE_LABEL_WEIGHTED,
               "use_caffe_datum supports label_type 0 or 4 only, got ", lt);
    C2_ENFORCE(OutputSize() == 2, "use_caffe_datum gives exactly 2 outputs (data, label), got ",
               OutputSize());
  }
  const int n_extra = OutputSize() - 2;
  format_.output_sizes = GetRepeatedArgument<int>("output_sizes", std::vector<int>(n_extra, 1));
  C2_ENFORCE(static_cast<int>(format_.output_sizes.size()) == n_extra, "output_sizes has ",
             format_.output_sizes.size(), " entries but the op has ", n_extra, " extra outputs");
  for (int size : format_.output_sizes) {
    C2_ENFORCE(size > 0, "output_sizes entries must be > 0, got ", size);
  }

  ImageTransformParams& t = transform_;
  t.scale = GetSingleArgument<int>("scale", -1);
  t.minsize = GetSingleArgument<int>("minsize", -1);
  const std::vector<int> random_scale = GetRepeatedArgument<int>("random_scale", {-1, -1});
  C2_ENFORCE(random_scale.size() == 2, "random_scale must hold [min, max], got ",
             random_scale.size(), " values");
  if (random_scale[0] > 0) {
    C2_ENFORCE(random_scale[1] >= random_scale[0], "random_scale [", random_scale[0], ", ",
               random_scale[1], "] must have max >= min");
    t.random_scale_min = random_scale[0];
    t.random_scale_max = random_scale[1];
    t.minsize = random_scale[0];
  }
  t.warp = GetSingleArgument<int>("warp", 0) != 0;
  t.crop = GetSingleArgument<int>("crop", -1);
  t.mirror = GetSingleArgument<int>("mirror", 0) != 0;
  t.is_test = GetSingleArgument<int>("is_test", 0) != 0;
  t.scale_jitter_type = GetSingleArgument<int>("scale_jitter_type", 0);
  t.color_jitter = GetSingleArgument<int>("color_jitter", 0) != 0;
  t.saturation = GetSingleArgument<float>("img_saturation", 0.4f);
  t.brightness = GetSingleArgument<float>("img_brightness", 0.4f);
  t.contrast = GetSingleArgument<float>("img_contrast", 0.4f);
  t.color_lighting = GetSingleArgument<int>("color_lighting", 0) != 0;
  t.lighting_std = GetSingleArgument<float>("color_lighting_std", 0.1f);
  t.box[0] = GetSingleArgument<int>("bounding_ymin", -1);
  t.box[1] = GetSingleArgument<int>("bounding_xmin", -1);
  t.box[2] = GetSingleArgument<int>("bounding_height", -1);
  t.box[3] = GetSingleArgument<int>("bounding_width", -1);
  C2_ENFORCE((t.scale > 0) != (t.minsize > 0),
             "exactly one of scale and minsize (or random_scale) must be > 0, got scale ", t.scale,
             " and minsize ", t.minsize);
  C2_ENFORCE(t.crop > 0, "crop must be > 0, got ", t.crop);
  C2_ENFORCE(std::max(t.scale, t.minsize) >= t.crop, "scale/minsize ", std::max(t.scale, t.minsize),
             " must be >= crop ", t.crop);
  C2_ENFORCE(t.scale_jitter_type == 0 || t.scale_jitter_type == 1,
             "scale_jitter_type must be 0 or 1, got ", t.scale_jitter_type);
  const bool has_mean_list = !GetRepeatedArgument<float>("mean_per_channel").empty();
  const bool has_std_list = !GetRepeatedArgument<float>("std_per_channel").empty();
  t.mean = PerChannel(*this, "mean_per_channel", "mean", 0.0f, channels_);
  std::vector<float> stds = PerChannel(*this, "std_per_channel", "std", 1.0f, channels_);
  if (has_mean_list && has_std_list) {
    C2_ENFORCE(GetRepeatedArgument<float>("mean_per_channel").size() ==
                   GetRepeatedArgument<float>("std_per_channel").size(),
               "mean_per_channel and std_per_channel must have the same length");
  }
  for (float s : stds) {
    C2_ENFORCE(s != 0.0f, "std must be nonzero");
    t.inv_std.push_back(1.0f / s);
  }
  output_type_ = ParseOutputType(*this);
  gpu_transform_ = device().type == kCUDA && GetSingleArgument<int>("use_gpu_transform", 0) != 0;
  if (gpu_transform_) {
    t.mirror_in_test = true;
    t.color_jitter = t.color_lighting = false;
  }

  const int threads = GetSingleArgument<int>("decode_threads", 4);
  C2_ENFORCE(threads >= 1, "decode_threads must be >= 1, got ", threads);
  pool_ = std::make_unique<ThreadPool>(threads);
  const DeviceOption& option = device_option();
  seed_ = option.has_random_seed() ? option.random_seed() : RandomNumberSeed();

  if (InputSize() == 0) {
    const std::string db = GetSingleArgument<std::string>("db", "");
    C2_ENFORCE(!db.empty(), "with no reader input, argument 'db' (the DB to read) is required");
    owned_reader_ =
        std::make_unique<db::DBReader>(GetSingleArgument<std::string>("db_type", "leveldb"), db);
  }
  for (int i = 0; i < n_extra; ++i) extras_.push_back(std::make_unique<Tensor>());
}

ImageInputOp::~ImageInputOp() { Finalize(); }

const db::DBReader& ImageInputOp::reader() const {
  return owned_reader_ ? *owned_reader_ : InputObject<db::DBReader>(0);
}

void ImageInputOp::DecodeItem(int i, uint32_t seed) {
  const std::string where = MakeString("record '", keys_[i], "' of ", db_name_);
  ImageRecord& record = records_[i];
  ParseImageRecord(values_[i], format_, where, &record);
  std::mt19937 rng(seed);
  const size_t item = static_cast<size_t>(transform_.crop) * transform_.crop * channels_;
  const int* box = record.has_box ? record.box : nullptr;
  if (gpu_transform_) {
    uint8_t* out = static_cast<uint8_t*>(data_.raw_mutable_data()) + i * item;
    CropImageBytes(record.image, box, transform_, &rng, where, out);
  } else if (output_type_ == DataType::FLOAT) {
    float* out = static_cast<float*>(data_.raw_mutable_data()) + i * item;
    TransformImage(record.image, box, transform_, &rng, where, out);
  } else {
    std::vector<float> hwc(item);
    TransformImage(record.image, box, transform_, &rng, where, hwc.data());
    float16* out = static_cast<float16*>(data_.raw_mutable_data()) + i * item;
    for (size_t k = 0; k < item; ++k) out[k] = FloatToHalf(hwc[k]);
  }
  record.image.release();
}

void ImageInputOp::ReadInputs() {
  const db::DBReader& r = reader();
  db_name_ = MakeString(r.db_type(), " DB '", r.source(), "'");
  keys_.resize(batch_size_);
  values_.resize(batch_size_);
  read_indices_.resize(batch_size_);
  for (int i = 0; i < batch_size_; ++i) read_indices_[i] = r.Read(&keys_[i], &values_[i]);
}

void ImageInputOp::Prefetch() {
  records_.resize(batch_size_);
  data_.Resize(batch_size_, transform_.crop, transform_.crop, channels_);
  data_.raw_mutable_data(TypeMeta::FromDataType(gpu_transform_ ? DataType::UINT8 : output_type_));

  std::vector<uint32_t> seeds(batch_size_);
  for (int i = 0; i < batch_size_; ++i) seeds[i] = RecordSeed(seed_, read_indices_[i]);
  TaskGroup group(batch_size_);
  for (int i = 0; i < batch_size_; ++i) {
    pool_->Run([this, i, &seeds, &group] {
      std::exception_ptr error;
      try {
        DecodeItem(i, seeds[i]);
      } catch (...) {
        error = std::current_exception();
      }
      group.Done(error);
    });
  }
  group.Wait();
  FillLabelsAndExtras();
}

void ImageInputOp::FillLabelsAndExtras() {
  std::vector<const ValueRow*> rows(batch_size_);
  for (int i = 0; i < batch_size_; ++i) rows[i] = &records_[i].label;
  const bool single =
      format_.label_type == SINGLE_LABEL || format_.label_type == SINGLE_LABEL_WEIGHTED;
  FillRows(rows, single ? 1 : format_.num_labels, single, &label_);
  for (size_t e = 0; e < extras_.size(); ++e) {
    for (int i = 0; i < batch_size_; ++i) rows[i] = &records_[i].extras[e];
    FillRows(rows, format_.output_sizes[e], false, extras_[e].get());
  }
}

void ImageInputOp::CopyPrefetched() {
  Output(0)->CopyFrom(data_);
  CopyLabelsAndExtras();
}

void ImageInputOp::CopyLabelsAndExtras() {
  Output(1)->CopyFrom(label_);
  for (size_t e = 0; e < extras_.size(); ++e) Output(2 + e)->CopyFrom(*extras_[e]);
}

REGISTER_CPU_OPERATOR(ImageInput, ImageInputOp);
// The CUDA registration (with the GPU transform) is in image_input_op_cuda.cc.

OPERATOR_SCHEMA(ImageInput)
    .NumInputs(0, 1)
    .NumOutputs(2, INT_MAX)
    .TensorInference(ImageInputInference)
    .SetDoc(R"DOC(
Reads `batch_size` image records from the DBReader, decodes them with OpenCV on `decode_threads`
threads, resizes (short side to `scale`, or up to `minsize` / a random size in `random_scale`; `warp`
ignores the aspect ratio), crops `crop` x `crop` (centred when `is_test`, random otherwise), and in
training optionally mirrors, applies an Inception-style random-sized crop (`scale_jitter_type` 1),
colour jitter and PCA lighting. Pixels are normalized per BGR channel with `mean`/`std` (or
`mean_per_channel`/`std_per_channel`) and written NHWC. Records are TensorProtos
[image (STRING encoded or BYTE raw HWC), label, (weights), extras..., (bounding box INT32 x4)] or
caffe Datum (`use_caffe_datum`). The next batch is prepared in the background.
)DOC")
    .Arg("batch_size", "(int) images per batch, required")
    .Arg("label_type",
         "(int, default 0) 0 single, 1 multi sparse, 2 multi dense, 3 weighted sparse, 4 single "
         "weighted")
    .Arg("num_labels", "(int) label row length for label types 1-3")
    .Arg("color", "(int, default 1) 1: BGR, 0: grey")
    .Arg("color_jitter", "(int, default 0) random saturation/brightness/contrast (training)")
    .Arg("img_saturation", "(float, default 0.4) saturation jitter range")
    .Arg("img_brightness", "(float, default 0.4) brightness jitter range")
    .Arg("img_contrast", "(float, default 0.4) contrast jitter range")
    .Arg("color_lighting", "(int, default 0) AlexNet PCA lighting (training)")
    .Arg("color_lighting_std", "(float, default 0.1) std of the PCA coefficients")
    .Arg("scale_jitter_type", "(int, default 0) 1: Inception-style random-sized crop (training)")
    .Arg("scale", "(int) resize the short side to this")
    .Arg("minsize", "(int) resize the short side up to this when smaller")
    .Arg("random_scale", "(ints [min, max]) per-image minsize drawn uniformly")
    .Arg("warp", "(int, default 0) resize both sides to scale/minsize")
    .Arg("crop", "(int) output side length, required")
    .Arg("mirror", "(int, default 0) random horizontal flip (training)")
    .Arg("mean", "(float, default 0) mean subtracted from every channel")
    .Arg("std", "(float, default 1) std dividing every channel")
    .Arg("mean_per_channel", "(floats, 1 or 3, BGR) per-channel means")
    .Arg("std_per_channel", "(floats, 1 or 3, BGR) per-channel stds")
    .Arg("bounding_ymin", "(int, default -1) default crop box top")
    .Arg("bounding_xmin", "(int, default -1) default crop box left")
    .Arg("bounding_height", "(int, default -1) default crop box height")
    .Arg("bounding_width", "(int, default -1) default crop box width")
    .Arg("is_test", "(int, default 0) centre crop, no random augmentation")
    .Arg("use_caffe_datum", "(int, default 0) records are caffe Datum")
    .Arg("use_gpu_transform",
         "(int, default 0) CUDA only: NCHW output, mirror also in test, no colour augmentation")
    .Arg("output_type", "(int or string, default FLOAT) FLOAT or FLOAT16 data output")
    .Arg("decode_threads", "(int, default 4) decoding threads")
    .Arg("output_sizes", "(ints) row length of each extra output")
    .Arg("db", "(string) DB to open when there is no reader input")
    .Arg("db_type", "(string, default leveldb) type of `db`")
    .Arg("no_prefetch", "(bool, default false) decode synchronously in Run")
    .Input(0, "reader", "a DBReader (from CreateDB)")
    .Output(0, "data", "(batch_size, crop, crop, C) images, NHWC, BGR")
    .Output(1, "label", "(batch_size) or (batch_size, num_labels) labels");

REGISTER_GRADIENT(ImageInput, NoGradient);

}  // namespace caffe2
