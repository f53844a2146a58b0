// Process initialisation (spec §5.13): GlobalInit parses --caffe2_* flags, sets the log level and
// runs the registered init functions, once per process (later calls only re-parse flags).
#pragma once

#include <string>
#include <vector>

namespace caffe2 {

// args[0] is the program name. Throws on an unknown --caffe2_* flag or a malformed value.
void GlobalInit(const std::vector<std::string>& args);
bool GlobalInitAlreadyRun();

// Registers a function run by the first GlobalInit (backends use it to set themselves up).
bool RegisterInitFunction(void (*fn)(), const char* description);

}  // namespace caffe2
