# Copies generated *_pb2.py modules (FILES, a ;-list) into DEST, making each build its descriptors
# in caffe2.proto.DESCRIPTOR_POOL instead of protobuf's default pool (see proto/CMakeLists.txt).
file(MAKE_DIRECTORY "${DEST}")
foreach(src IN LISTS FILES)
  file(READ "${src}" text)
  string(REPLACE "from google.protobuf import descriptor_pool as _descriptor_pool"
                 "from caffe2 import proto as _caffe2_proto" text "${text}")
  string(REPLACE "_descriptor_pool.Default()" "_caffe2_proto.DESCRIPTOR_POOL" text "${text}")
  string(FIND "${text}" "_caffe2_proto.DESCRIPTOR_POOL" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${src}: the generated code no longer uses the default pool as expected")
  endif()
  get_filename_component(name "${src}" NAME)
  file(WRITE "${DEST}/${name}" "${text}")
endforeach()
