// The two pages of a report, index.md and index.html, piece by piece: ids
// for anchors, the contents list, headings, and tables -- whole when short,
// else summarised, their first rows shown and every row linked in data/.
// Used by report.cpp alone (header-only: the pieces are small).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "lplab/lab/table.h"

namespace lplab::experiments::page {

// A table of more rows than this stays in its data files: the pages show
// what its columns hold, its first rows (collapsed in HTML) and the links.
// 40 rows is a screenful; the longest tables (training_steps: 1,400 rows)
// made index.md 401 KB and index.html 2.6 MB when shown whole.
constexpr std::size_t kInlineRows = 40;
constexpr std::size_t kPreviewRows = 10;

inline std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

inline std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else o += c;
  }
  return o;
}

// Text inside a Markdown link's brackets.
inline std::string md_link_text(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '[' || c == ']' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

inline std::string header_cell(const Column& c) {
  return c.unit.empty() ? c.name : fmt::format("{} [{}]", c.name, c.unit);
}

// The page's anchors: each id once (a second table or plot of the same name
// gets "-2"), made of letters, digits, '-' and '_', which need no escaping
// in an HTML attribute or a URL fragment. index.md and index.html use the
// same ids, so a link into one works in the other.
class Anchors {
 public:
  std::string take(const std::string& prefix, const std::string& name) {
    std::string id = prefix;
    for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '-';
    std::string unique = id;
    for (int n = 2; !used_.insert(unique).second; ++n) unique = fmt::format("{}-{}", id, n);
    return unique;
  }

 private:
  std::set<std::string> used_;
};

// The contents list: one entry per heading, in page order.
struct Contents {
  struct Entry {
    int depth;  // 0: a section (h2), 1: within one (h3)
    std::string title, id;
  };
  std::vector<Entry> entries;

  std::string md() const {
    std::string s;
    for (const Entry& e : entries)
      s += fmt::format("{}- [{}](#{})\n", std::string(2 * e.depth, ' '), md_link_text(e.title), e.id);
    return s;
  }
  std::string html() const {
    std::string s = "<ul>";
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      s += fmt::format("<li><a href=\"#{}\">{}</a>", e.id, html_escape(e.title));
      const int next = i + 1 < entries.size() ? entries[i + 1].depth : 0;
      if (next > e.depth) s += "<ul>";
      else s += "</li>";
      if (next < e.depth) s += "</ul></li>";
      s += "\n";
    }
    return s + "</ul>\n";
  }
};

// A heading of both pages, entered in the contents.
struct Heading {
  std::string md, html;
};
inline Heading heading(Contents& toc, int depth, const std::string& title, const std::string& id) {
  toc.entries.push_back({depth, title, id});
  return {fmt::format("{} <a id=\"{}\"></a>{}\n\n", depth == 0 ? "##" : "###", id, title),
          fmt::format("<h{0} id=\"{1}\">{2}</h{0}>\n", depth + 2, id, html_escape(title))};
}

// What one column of a long table holds, in a line: its words (the first
// few, when there are many) or the range of its numbers, and how many cells
// are empty or not finite.
inline std::string column_summary(const Table& t, std::size_t c) {
  std::vector<std::string> words;
  std::set<std::string> seen;
  double lo = INFINITY, hi = -INFINITY;
  bool integers = true;
  std::size_t numbers = 0, empty = 0, not_finite = 0;
  for (const Row& r : t.rows) {
    const Cell& cell = r.cells[c];
    if (cell.index() == 0) {
      ++empty;
    } else if (cell.index() == 3) {
      if (seen.insert(std::get<std::string>(cell)).second) words.push_back(std::get<std::string>(cell));
    } else if (const double v = cell_number(cell); !std::isfinite(v)) {
      ++not_finite;
    } else {
      lo = std::min(lo, v), hi = std::max(hi, v), ++numbers;
      integers = integers && cell.index() == 1;
    }
  }
  std::vector<std::string> parts;
  constexpr std::size_t kAllWords = 8, kSomeWords = 6;
  if (!words.empty())
    parts.push_back(words.size() <= kAllWords
                        ? fmt::format("{}", fmt::join(words, ", "))
                        : fmt::format("{} values: {}, ...", words.size(),
                                      fmt::join(words.begin(), words.begin() + kSomeWords, ", ")));
  const auto number = [integers](double v) {
    return integers ? fmt::format("{}", static_cast<std::int64_t>(v)) : fmt::format("{:.4g}", v);
  };
  if (numbers > 0) parts.push_back(lo == hi ? number(lo) : fmt::format("{} to {}", number(lo), number(hi)));
  if (not_finite > 0) parts.push_back(fmt::format("{} not finite", not_finite));
  if (empty > 0) parts.push_back(fmt::format("{} empty", empty));
  return fmt::format("{}: {}", header_cell(t.columns[c]), fmt::join(parts, "; "));
}

// A table's rows [0, n) under its header.
inline std::string md_rows(const Table& t, std::size_t n) {
  std::vector<std::string> h;
  for (const Column& c : t.columns) h.push_back(md_escape(header_cell(c)));
  std::string s = fmt::format("| {} |\n|", fmt::join(h, " | "));
  for (std::size_t i = 0; i < h.size(); ++i) s += " --- |";
  s += "\n";
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> cells;
    for (const Cell& c : t.rows[i].cells) cells.push_back(md_escape(cell_text(c, 6)));
    s += fmt::format("| {} |\n", fmt::join(cells, " | "));
  }
  return s;
}

inline std::string html_rows(const Table& t, std::size_t n) {
  std::string s = "<div class=\"scroll\"><table>\n<tr>";
  for (const Column& c : t.columns) s += fmt::format("<th>{}</th>", html_escape(header_cell(c)));
  s += "</tr>\n";
  for (std::size_t i = 0; i < n; ++i) {
    s += "<tr>";
    for (const Cell& c : t.rows[i].cells) {
      const bool num = c.index() == 1 || c.index() == 2;
      s += fmt::format("<td{}>{}</td>", num ? " class=\"n\"" : "", html_escape(cell_text(c, 6)));
    }
    s += "</tr>\n";
  }
  return s + "</table></div>\n";
}

// A table in index.md: whole when short; else what its columns hold, its
// first rows and the data files that hold every row.
inline std::string md_table(const Table& t) {
  const std::string csv = "data/" + t.id + ".csv", json = "data/" + t.id + ".json";
  std::string s;
  if (t.rows.size() <= kInlineRows) {
    s = md_rows(t, t.rows.size()) + fmt::format("\nData: [{}]({}), [JSON]({}).\n", csv, csv, json);
  } else {
    s = fmt::format("**{} rows**, too many to read here: every row, full precision, is in [{}]({}) ([JSON]({})). "
                    "Its columns:\n\n",
                    t.rows.size(), csv, csv, json);
    for (std::size_t c = 0; c < t.columns.size(); ++c) s += "- " + md_escape(column_summary(t, c)) + "\n";
    s += fmt::format("\n<details><summary>The first {} rows</summary>\n\n{}\n</details>\n", kPreviewRows,
                     md_rows(t, kPreviewRows));
  }
  for (const std::string& n : t.notes) s += fmt::format("\n> {}\n", n);
  return s;
}

// The same in index.html, the first rows collapsed.
inline std::string html_table(const Table& t) {
  const std::string csv = "data/" + t.id + ".csv", json = "data/" + t.id + ".json";
  std::string s;
  if (t.rows.size() <= kInlineRows) {
    s = html_rows(t, t.rows.size()) +
        fmt::format("<p class=\"more\">Data: <a href=\"{}\">{}</a>, <a href=\"{}\">JSON</a>.</p>\n", csv, csv, json);
  } else {
    s = fmt::format("<p class=\"more\"><b>{} rows</b>, too many to read here: every row, full precision, is in "
                    "<a href=\"{}\">{}</a> (<a href=\"{}\">JSON</a>). Its columns:</p>\n<ul class=\"cols\">\n",
                    t.rows.size(), csv, csv, json);
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      s += "<li>" + html_escape(column_summary(t, c)) + "</li>\n";
    s += fmt::format("</ul>\n<details><summary>The first {} rows</summary>\n{}</details>\n", kPreviewRows,
                     html_rows(t, kPreviewRows));
  }
  for (const std::string& n : t.notes) s += fmt::format("<p class=\"note\">{}</p>\n", html_escape(n));
  return s;
}

}  // namespace lplab::experiments::page
