// A report as one document and its two renderings: write_report (report.cpp)
// says once what the report holds -- headings, paragraphs, tables, figures,
// each experiment's parameters -- and markdown() and html() each render all
// of it, so that index.md and index.html cannot say different things. The
// contents list is made from the headings by each renderer.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "lplab/lab/plot.h"
#include "lplab/lab/table.h"
#include "report_page.h"

namespace lplab::experiments::page {

// What the top of both pages says of the run.
struct Header {
  std::string cpu_model, simd_target, version, sizes, when, command;
  unsigned cores = 0;
  double memory_gib = 0, seconds = 0;
};

struct Block {
  enum class Kind {
    heading,     // depth 0: a section (h2), 1: within one (h3); entered in the contents
    paragraph,   // text, with an HTML class
    table,       // a table, whole or summarised (md_table, html_table)
    figure,      // a plot from its files, or why it was not drawn
    parameters,  // an experiment's summary, parameters and time
  };
  Kind kind;
  int depth = 0;
  std::string title = {}, id = {};  // heading; figure: the plot's title and id
  std::string text = {}, css = {};  // paragraph; figure: caption; parameters: summary
  std::string detail = {};          // figure: why it was not drawn ("" when drawn); parameters: "k=v ..."
  const Table* table = nullptr;
  double seconds = 0;         // parameters
};

struct Document {
  Header header;
  std::string contents_id;  // the anchor of the contents list
  std::vector<Block> blocks;

  void heading(int depth, std::string title, std::string id) {
    blocks.push_back({.kind = Block::Kind::heading, .depth = depth, .title = std::move(title), .id = std::move(id)});
  }
  void paragraph(std::string text, std::string css) {
    blocks.push_back({.kind = Block::Kind::paragraph, .text = std::move(text), .css = std::move(css)});
  }
  void table(const Table& t) { blocks.push_back({.kind = Block::Kind::table, .table = &t}); }
  void figure(const Plot& p, std::string error) {
    blocks.push_back({.kind = Block::Kind::figure, .title = p.title, .id = p.id, .text = p.caption,
                      .detail = std::move(error)});
  }
  void parameters(std::string summary, std::string params, double seconds) {
    blocks.push_back({.kind = Block::Kind::parameters, .text = std::move(summary), .detail = std::move(params),
                      .seconds = seconds});
  }
};

// index.md.
inline std::string markdown(const Document& d) {
  Contents toc;
  std::string body;
  for (const Block& b : d.blocks) {
    switch (b.kind) {
      case Block::Kind::heading: body += heading(toc, b.depth, b.title, b.id).md; break;
      case Block::Kind::paragraph: body += b.text + "\n\n"; break;
      case Block::Kind::table: body += md_table(*b.table) + "\n"; break;
      case Block::Kind::figure:
        if (!b.detail.empty()) {
          body += fmt::format("Not drawn: {}\n\n", b.detail);
          break;
        }
        // The plot is shown from its file: the page stays small, and a plot
        // redrawn from its gnuplot script shows in the page as it is.
        body += fmt::format("![{}](plots/{}.png)\n\n{} ([SVG](plots/{}.svg), [gnuplot](plots/{}.gp))\n\n",
                            md_link_text(b.title), b.id, b.text, b.id, b.id);
        break;
      case Block::Kind::parameters:
        body += fmt::format("{}\n\nParameters: `{}` ({:.2f} s)\n\n", b.text, b.detail, b.seconds);
        break;
    }
  }
  const Header& h = d.header;
  const std::string head = fmt::format(
      "# lplab report\n\n"
      "- machine: **{}**, {} cores, SIMD target {}, {:.1f} GiB memory\n"
      "- lplab {} ({}), {}\n- command: `{}`\n- experiments took {:.1f} s\n",
      h.cpu_model, h.cores, h.simd_target, h.memory_gib, h.version, h.sizes, h.when, h.command, h.seconds);
  return fmt::format("{}\n## <a id=\"{}\"></a>Contents\n\n{}\n{}", head, d.contents_id, toc.md(), body);
}

// index.html, styled by `css`.
inline std::string html(const Document& d, const char* css) {
  Contents toc;
  std::string body;
  for (const Block& b : d.blocks) {
    switch (b.kind) {
      case Block::Kind::heading: body += heading(toc, b.depth, b.title, b.id).html; break;
      case Block::Kind::paragraph: body += fmt::format("<p class=\"{}\">{}</p>\n", b.css, html_escape(b.text)); break;
      case Block::Kind::table: body += html_table(*b.table); break;
      case Block::Kind::figure:
        if (!b.detail.empty()) {
          body += fmt::format("<p class=\"note\">Not drawn: {}</p>\n", html_escape(b.detail));
          break;
        }
        // The SVG is shown from its file, as the PNG is in index.md (the
        // plots' own ids stay out of the page).
        body += fmt::format(
            "<figure><img src=\"plots/{}.svg\" alt=\"{}\" width=\"800\" height=\"500\" loading=\"lazy\">"
            "<figcaption>{} (<a href=\"plots/{}.svg\">SVG</a>, <a href=\"plots/{}.png\">PNG</a>, "
            "<a href=\"plots/{}.gp\">gnuplot</a>)</figcaption></figure>\n",
            b.id, html_escape(b.title), html_escape(b.text), b.id, b.id, b.id);
        break;
      case Block::Kind::parameters:
        body += fmt::format("<p>{}</p>\n<p>Parameters: <code>{}</code> ({:.2f} s)</p>\n", html_escape(b.text),
                            html_escape(b.detail), b.seconds);
        break;
    }
  }
  const Header& h = d.header;
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lplab report — {}</title>"
      "<style>{}</style></head><body>\n<h1>lplab report</h1>\n<ul><li>machine: <b>{}</b>, {} cores, SIMD target {}, "
      "{:.1f} GiB memory</li><li>lplab {} ({}), {}</li><li>command: <code>{}</code></li><li>experiments took "
      "{:.1f} s</li></ul>\n<nav><h2 id=\"{}\">Contents</h2>\n{}</nav>\n{}</body></html>\n",
      html_escape(h.cpu_model), css, html_escape(h.cpu_model), h.cores, h.simd_target, h.memory_gib, h.version,
      h.sizes, h.when, html_escape(h.command), h.seconds, d.contents_id, toc.html(), body);
}

}  // namespace lplab::experiments::page
