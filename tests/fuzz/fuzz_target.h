// The entry point every fuzz target defines (libFuzzer's convention). Built with clang and
// -fsanitize=fuzzer it is driven by libFuzzer (scripts/run_sanitizers.sh); built with any compiler
// and fuzz_replay_main.cc it replays saved inputs (the seed corpus and the regressions), as a
// ctest.
//
// A target must return normally for every input: a clear error (a thrown caffe2 exception) is
// caught inside the target; a crash, a sanitizer report, a leak or a hang is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// Runs one step of a target, for which a thrown error is an acceptable outcome.
template <class F>
void Refusable(F&& step) {
  try {
    step();
  } catch (const std::exception&) {
    // a clear error is an acceptable outcome
  }
}
