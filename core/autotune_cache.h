// Kernel choices made by timing, kept so that every process makes the same ones
// (docs/determinism.md).
//
// Kernels pick their algorithm by a fixed rule, so the same build on the same machine gives bitwise
// identical results in every process whatever the load. Timing is opt-in: an op's exhaustive_search
// argument, or --caffe2_exhaustive_search for every op that can time its choices. A timed choice is
// recorded here under a key that names the kernel, the pass and every dim and argument the choice
// depends on. With --caffe2_autotune_cache=PATH the records are read from PATH and each new one is
// appended to it, so a later process (another shard, a reloaded Predictor) given the same file
// makes the same choices without timing, and gets the tuning process's results bit for bit. A
// recorded choice is used whether or not that later process asks for timing.
//
// The file is text, one record per line: "<machine>\t<key>\t<choice>". Records made on another
// machine (AutotuneMachine(): CPU model and instruction sets) are kept in the file but not used;
// for one key the first record wins, so processes tuning side by side converge on the earliest
// choice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace caffe2 {

// True when an op should time its algorithm choices: its exhaustive_search argument, or the flag.
bool ExhaustiveSearchEnabled(bool op_argument);

// The recorded choice for `key` on this machine (from this process or from the cache file), if any.
std::optional<std::string> AutotuneLookup(const std::string& key);

// Records a timed choice (kept in memory, and appended to the cache file when one is set). Keys and
// choices must not hold tabs or newlines.
void AutotuneRecord(const std::string& key, const std::string& choice);

// This machine's signature in the records: the CPU model name and the instruction-set flags that
// select kernels (AVX2, FMA, AVX-512 subsets, AMX).
const std::string& AutotuneMachine();

// Changes whenever the records in force may have changed other than by AutotuneRecord: a new
// --caffe2_autotune_cache path, or AutotuneForget. Kernels that keep their choices in plans drop
// them when it changes.
uint64_t AutotuneGeneration();

// Forgets the in-memory records (the file is read again on the next lookup).
void AutotuneForget();

}  // namespace caffe2
