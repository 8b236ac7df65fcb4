// The lab is written in the run-time layer's vocabulary: formats by name
// (lplab/runtime/formats.h), UsageError and the text helpers
// (lplab/runtime/text.h). Its code names them unqualified.
#pragma once

#include "lplab/runtime/formats.h"
#include "lplab/runtime/text.h"

namespace lplab::experiments {
using namespace lplab::runtime;
}  // namespace lplab::experiments
