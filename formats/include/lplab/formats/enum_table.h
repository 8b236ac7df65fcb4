// An enumeration and its names as one declaration (LLVM's .def files are the
// model): the enumerators are listed once, in an X-macro beside the enum,
//
//   #define LPLAB_OVERFLOWS(X) X(ieee, "IEEE 754-2019 7.4: infinity, ...") X(saturate, "...", "satfinite")
//   enum class Overflow : std::uint8_t { LPLAB_OVERFLOWS(LPLAB_ENUMERATOR) };
//   LPLAB_ENUM_TABLE(Overflow, "overflow policy", LPLAB_OVERFLOWS)
//
// and each entry is X(enumerator, what it means, other spellings...). The
// table gives the names, the parser, the "known:" list of an error and the
// help texts (enum_entries, enum_name, enum_parse, enum_names_text); the
// run-time layer's parse<E> (lplab/runtime/names.h) adds the error with a
// did-you-mean. A new value is one X(...) line.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace lplab {

// One enumerator: its value, its name, one line on what it means, and up to
// three other spellings the tool and specs accept.
template <class E>
struct EnumEntry {
  E value;
  const char* name;
  const char* doc;
  const char* aliases[3] = {};
};

// The X-macro callbacks: the enumerator, and its table entry.
#define LPLAB_ENUMERATOR(name, ...) name,
#define LPLAB_ENUM_ENTRY(name, doc, ...) {Self::name, #name, doc, {__VA_ARGS__}},

// Declares the table of `Enum` (in the enum's namespace, found by
// argument-dependent lookup): `noun` names one value in messages
// ("unknown <noun> 'x'").
#define LPLAB_ENUM_TABLE(Enum, Noun, LIST) LPLAB_ENUM_TABLE_OF(Enum, Noun, LIST, LPLAB_ENUM_ENTRY)
// The same for a list whose lines carry more than the names (the unary ops'
// functors): ENTRY(line's arguments) is LPLAB_ENUM_ENTRY(name, doc, aliases...).
#define LPLAB_ENUM_TABLE_OF(Enum, Noun, LIST, ENTRY)                                \
  struct Enum##_enum_table {                                                        \
    using Self = Enum;                                                              \
    static constexpr const char* noun = Noun;                                       \
    static constexpr ::lplab::EnumEntry<Enum> entries[] = {LIST(ENTRY)};            \
  };                                                                                \
  constexpr Enum##_enum_table lplab_enum_table(Enum) { return {}; }

template <class E>
using EnumTableOf = decltype(lplab_enum_table(E{}));

// Every value of E, in declaration order.
template <class E>
constexpr std::span<const EnumEntry<E>> enum_entries() {
  return EnumTableOf<E>::entries;
}
template <class E>
constexpr const char* enum_noun() {
  return EnumTableOf<E>::noun;
}
template <class E>
constexpr std::size_t enum_count() {
  return std::size(EnumTableOf<E>::entries);
}

// The entry of a value ("?" for a value outside the enumeration).
template <class E>
constexpr const EnumEntry<E>* enum_entry(E e) {
  for (const EnumEntry<E>& x : enum_entries<E>())
    if (x.value == e) return &x;
  return nullptr;
}
// (A loop of its own, with no pointer compared: GCC's -fsanitize=undefined
// makes a comparison of &entries[i] with nullptr no constant expression.)
template <class E>
constexpr const char* enum_name(E e) {
  for (const EnumEntry<E>& x : enum_entries<E>())
    if (x.value == e) return x.name;
  return "?";
}

// The value whose name or alias is `s`, exactly.
template <class E>
constexpr std::optional<E> enum_parse(std::string_view s) {
  for (const EnumEntry<E>& x : enum_entries<E>()) {
    if (s == x.name) return x.value;
    for (const char* alias : x.aliases)
      if (alias != nullptr && s == alias) return x.value;
  }
  return std::nullopt;
}

// "a, b, c": every name, in order, for a message or a help text.
template <class E>
std::string enum_names_text(std::string_view separator = ", ") {
  std::string s;
  for (const EnumEntry<E>& x : enum_entries<E>()) {
    if (!s.empty()) s += separator;
    s += x.name;
  }
  return s;
}

}  // namespace lplab
