// ImageInput (ops spec §2.4): reads image records from a DBReader, decodes and augments them on
// `decode_threads` threads and outputs a batch of NHWC images in BGR order with their labels.
//
// Inputs: [reader] (a DBReader from CreateDB), or none: the deprecated form that opens its own
// reader from the arguments `db` and `db_type` (default "leveldb"). Outputs: data float (or float16
// with output_type) (batch_size, crop, crop, C), C = 3 when `color` else 1; label (batch_size) for
// label types 0 and 4, (batch_size, num_labels) for 1, 2 and 3, int32 or float as the label protos
// of the batch's first record (sparse: int32 0/1, weighted sparse: float weights); then one output
// per `output_sizes` entry, (batch_size, output_sizes[i]), from the record's extra protos. With
// use_caffe_datum exactly two outputs.
//
// Records: TensorProtos [image, label, (weights for label types 3 and 4), extras..., (box)] where
// the image is STRING (an encoded file) or BYTE (raw HWC), or a caffe::Datum (encoded or raw CHW).
// Every argument of the spec is honoured on the CPU (see the schema doc in the .cc for the list).
// On a CUDA device (CudaImageInputOp, image_input_op_cuda.cc) the same batch is copied to the GPU;
// with use_gpu_transform=1 the decode threads only crop (and mirror, also in test mode, without
// colour jitter or lighting, as upstream) into uint8 NHWC, and a kernel normalizes the bytes into
// the data output, NCHW (batch_size, C, crop, crop) in output_type.
// Randomness: each image gets its own generator, seeded from the op's seed (the DeviceOption's
// random_seed when set) and the record's read index in the reader (core/db/db_reader.h). A batch is
// thus reproducible whatever the thread timing, and a run resumed after DBReaderSkip augments each
// record exactly as the uninterrupted run did.
// Errors (corrupt record, wrong number of protos, undecodable image, image smaller than the crop,
// bad labels) name the DB, the record key and the problem, also when raised on a decode thread.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/db/db_reader.h"
#include "core/thread_pool.h"
#include "operators/io/image_record.h"
#include "operators/io/image_transform.h"
#include "operators/io/prefetch_op.h"

namespace caffe2 {

class ImageInputOp : public PrefetchOperator {
 public:
  ImageInputOp(const OperatorDef& def, Workspace* ws);
  ~ImageInputOp() override;

 protected:
  void ReadInputs() override;
  void Prefetch() override;
  void CopyPrefetched() override;

  // For the CUDA subclass: the prepared batch (uint8 NHWC bytes with the GPU transform), its
  // labels and extras, and the normalization.
  bool gpu_transform() const { return gpu_transform_; }
  const Tensor& prefetched_data() const { return data_; }
  void CopyLabelsAndExtras();
  DataType output_type() const { return output_type_; }
  const ImageTransformParams& transform() const { return transform_; }

 private:
  const db::DBReader& reader() const;
  // Decodes and transforms item `i` of the batch from records_[i] into the prefetch buffers.
  void DecodeItem(int i, uint32_t seed);
  void FillLabelsAndExtras();

  int batch_size_;
  ImageRecordFormat format_;
  ImageTransformParams transform_;
  DataType output_type_ = DataType::FLOAT;
  bool gpu_transform_ = false;  // use_gpu_transform on a CUDA device
  int channels_ = 3;
  std::unique_ptr<db::DBReader> owned_reader_;
  uint64_t seed_ = 0;
  std::unique_ptr<ThreadPool> pool_;

  // The batch being prepared: its raw records (read by ReadInputs) and what they become.
  std::string db_name_;  // "<type> DB '<source>'", for errors
  std::vector<std::string> keys_, values_;
  std::vector<int64_t> read_indices_;
  std::vector<ImageRecord> records_;
  Tensor data_, label_;
  std::vector<std::unique_ptr<Tensor>> extras_;
};

}  // namespace caffe2
