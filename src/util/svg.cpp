#include "util/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch {

namespace {

std::string xml_escape(const std::string& s) {
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

struct Rgb { double r, g, b; };
Rgb lerp(Rgb a, Rgb b, double t) { return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t}; }

}  // namespace

std::string heatmap_color(double v, double vmin, double vmax, ColorScale scale) {
  double t = vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5;
  t = std::clamp(std::isnan(t) ? 0.0 : t, 0.0, 1.0);
  Rgb c;
  if (scale == ColorScale::red_yellow_green) {
    const Rgb red{215, 48, 39}, yellow{254, 224, 139}, green{26, 152, 80};
    c = t < 0.5 ? lerp(red, yellow, t * 2) : lerp(yellow, green, (t - 0.5) * 2);
  } else if (scale == ColorScale::blue_white_red) {
    const Rgb blue{33, 102, 172}, white{255, 255, 255}, red{178, 24, 43};
    c = t < 0.5 ? lerp(blue, white, t * 2) : lerp(white, red, (t - 0.5) * 2);
  } else {
    c = lerp(Rgb{255, 255, 255}, Rgb{8, 48, 107}, t);
  }
  auto b = [](double x) { return static_cast<int>(std::lround(std::clamp(x, 0.0, 255.0))); };
  return fmt::format("#{:02x}{:02x}{:02x}", b(c.r), b(c.g), b(c.b));
}

std::string heatmap_svg(const Heatmap& h) {
  const size_t rows = h.row_labels.size(), cols = h.col_labels.size();
  check(h.values.size() == rows * cols, "heatmap '{}': {} values for {} x {} cells", h.title,
        h.values.size(), rows, cols);
  const int cw = h.cell_width, ch = h.cell_height;
  size_t row_label_chars = 0;
  for (const auto& l : h.row_labels) row_label_chars = std::max(row_label_chars, l.size());
  const int left = 30 + static_cast<int>(row_label_chars) * 7 + 8;
  const int top = 40, bar_w = 14;
  const int grid_w = static_cast<int>(cols) * cw, grid_h = static_cast<int>(rows) * ch;
  // Wide enough for the title too (about 8 px per character at 14 px), so it is never clipped.
  const int title_w = static_cast<int>(h.title.size()) * 8 + 20;
  const int width = std::max(left + grid_w + 30 + bar_w + 50, title_w), height = top + grid_h + 50;
  const int title_x = title_w > left + grid_w ? width / 2 : left + grid_w / 2;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  s += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"14\" text-anchor=\"middle\">{}</text>\n",
                   title_x, xml_escape(h.title));
  for (size_t r = 0; r < rows; ++r) {
    int y = top + static_cast<int>(r) * ch;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
                     left - 6, y + ch / 2, xml_escape(h.row_labels[r]));
    for (size_t c = 0; c < cols; ++c) {
      int x = left + static_cast<int>(c) * cw;
      double v = h.values[r * cols + c];
      bool nodata = std::isnan(v);
      std::string fill = nodata ? "#dddddd" : heatmap_color(v, h.vmin, h.vmax, h.scale);
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\"><title>{} / {}: {}</title></rect>\n",
                       x, y, cw, ch, fill, xml_escape(h.row_labels[r]), xml_escape(h.col_labels[c]),
                       nodata ? std::string("no data") : fmt::format("{:.{}f}", v, h.decimals));
      if (h.show_values && !nodata) {
        double t = h.vmax > h.vmin ? (v - h.vmin) / (h.vmax - h.vmin) : 0.5;
        bool dark = h.scale == ColorScale::white_blue ? t > 0.55 : (t < 0.15 || t > 0.85);
        s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"middle\" fill=\"{}\">{:.{}f}</text>\n",
                         x + cw / 2, y + ch / 2, dark ? "white" : "black", v, h.decimals);
      }
    }
  }
  for (size_t c = 0; c < cols; ++c)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     left + static_cast<int>(c) * cw + cw / 2, top + grid_h + 16, xml_escape(h.col_labels[c]));
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + grid_w / 2,
                   top + grid_h + 38, xml_escape(h.x_label));
  s += fmt::format("<text x=\"12\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {0})\">{1}</text>\n",
                   top + grid_h / 2, xml_escape(h.y_label));
  // Colour bar: vmax at the top.
  const int bx = left + grid_w + 30, steps = 20;
  for (int i = 0; i < steps; ++i) {
    double v = h.vmax - (h.vmax - h.vmin) * (i + 0.5) / steps;
    s += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"/>\n", bx,
                     top + grid_h * static_cast<double>(i) / steps, bar_w,
                     grid_h / static_cast<double>(steps) + 0.5, heatmap_color(v, h.vmin, h.vmax, h.scale));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{:.{}f}</text>\n", bx + bar_w + 4, top, h.vmax, h.decimals);
  s += fmt::format("<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{:.{}f}</text>\n", bx + bar_w + 4, top + grid_h, h.vmin, h.decimals);
  s += "</svg>\n";
  return s;
}

void write_heatmap_svg(const std::string& path, const Heatmap& h) { write_file_atomic(path, heatmap_svg(h)); }

}  // namespace bosch
