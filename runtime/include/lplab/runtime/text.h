// The run-time layer's text: UsageError, numbers read from users and shown
// back (Python-style), names parsed with their "known" lists and
// did-you-mean, and the small helpers every message uses.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/formats/decimal.h"
#include "lplab/formats/enum_table.h"
#include "lplab/formats/policy.h"

namespace lplab::runtime {

// A user error: reported as one line on stderr, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every number a user writes (inspect's value, parameters, specs) is read by
// parse_value: the whole string as a decimal, hex float (0x1p-3), inf or nan,
// kept exactly enough to be rounded once into any format (formats/decimal.h).
// Numbers beyond double's range are numbers too. Throws UsageError for
// anything else.
Decimal parse_value(std::string_view text);
// The double nearest the number parse_value reads (inf or 0 beyond double's
// range): for quantities that are doubles (a sigma, a tolerance).
double parse_number(std::string_view text);

// Python's repr of a float: shortest round trip, with ".0" on integers.
std::string py_repr(double v);

// Shortest round-trip decimal of a double.
std::string shortest(double v);

// User text quoted in an error message, cut to its first 60 characters and
// "..." when longer: a hostile input gets a one-line error.
std::string shown(std::string_view s);

// " (did you mean 'X'?)" for the known word nearest `word` when it is a near
// miss (at most 2 edits, fewer than a third of its letters), else "": every
// list a user names from (commands, parameters, spec keys) suggests alike.
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& known);

// The length of the UTF-8 sequence at the start of `s` (RFC 3629 section
// 4: no overlong forms, no surrogates, nothing above U+10FFFF), or 0 when it
// is not one (or `s` is empty); `code` gets its code point.
std::size_t utf8_sequence(std::string_view s, char32_t& code);
// Where `s` stops being UTF-8, or npos if it is UTF-8 throughout.
std::size_t first_non_utf8(std::string_view s);

// A code as sign|exponent|mantissa bit groups, e.g. "0|1111|110"; an
// integer's as sign|value bits, "1|000" (int4's -8).
std::string bit_groups(std::uint64_t code, bool is_signed, int exponent_bits, int mantissa_bits);

// "unknown <noun> '<s>' (<known>)", `s` cut by shown(): the one wording of
// a name that is not in its list.
std::string unknown_name(std::string_view noun, std::string_view s, std::string_view known);

// The value of an enumeration declared with its names (formats/enum_table.h:
// policies, ops, scale rules, metric kinds, ...) by its name or an alias;
// UsageError naming every value otherwise. The parser of every binding, spec
// key and command.
template <class E>
E parse(std::string_view s) {
  if (const std::optional<E> v = enum_parse<E>(s)) return *v;
  throw UsageError(unknown_name(enum_noun<E>(), s, enum_names_text<E>()));
}

// A policy by its name or one of its aliases (formats/policy.h).
inline Round parse_round(std::string_view s) { return parse<Round>(s); }
inline Overflow parse_overflow(std::string_view s) { return parse<Overflow>(s); }
using lplab::overflow_name;
using lplab::round_name;
std::string flags_text(Flags f);

}  // namespace lplab::runtime
