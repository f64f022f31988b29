// A small SVG heatmap writer: rows x cols cells coloured by value, row/column labels, a colour
// bar, optionally the value printed in each cell. Used for NIAH length x depth pictures and
// for mask pictures (layers x KV heads).
#pragma once
#include <string>
#include <vector>

namespace bosch {

enum class ColorScale {
  red_yellow_green,  // low red, middle yellow, high green (NIAH score pictures)
  white_blue,        // low white, high dark blue (masks: 1 = SWA)
  blue_white_red,    // diverging: low blue, middle white, high red (signed interactions)
};

struct Heatmap {
  std::string title, x_label, y_label;
  std::vector<std::string> row_labels, col_labels;  // sizes give rows and cols
  std::vector<double> values;                       // rows * cols, row-major; NaN = no data
  double vmin = 0, vmax = 1;                        // colour range (values are clamped)
  ColorScale scale = ColorScale::red_yellow_green;
  bool show_values = true;
  int decimals = 2;
  int cell_width = 56, cell_height = 26;
};

// "#rrggbb" for v within [vmin, vmax] (clamped).
std::string heatmap_color(double v, double vmin, double vmax, ColorScale scale);
// The SVG document. Throws Error when values.size() != rows * cols.
std::string heatmap_svg(const Heatmap& h);
void write_heatmap_svg(const std::string& path, const Heatmap& h);  // atomic

}  // namespace bosch
