// The message of an expected std::invalid_argument, for tests that pin the
// exact text of lplab's one-line errors.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace lplab::testing {

// What f throws as std::invalid_argument; a test failure (and "") if it
// throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return {};
}

}  // namespace lplab::testing
