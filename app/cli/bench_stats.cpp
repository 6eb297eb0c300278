#include "bench_stats.h"

#include <algorithm>
#include <cmath>

namespace wb::cli {

RepeatStats repeat_stats(std::vector<double> v) {
    if (v.empty()) return {NAN, NAN, NAN, NAN};
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    RepeatStats s{};
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.min = v.front();
    s.max = v.back();
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(n);
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    s.stdev = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;
    return s;
}

std::string format_columns(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<Align>& align, bool pipes) {
    const size_t n = align.size();
    std::vector<size_t> width(n, 0);
    for (const auto& row : rows) {
        for (size_t c = 0; c < n && c < row.size(); ++c)
            width[c] = std::max(width[c], row[c].size());
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line = pipes ? "| " : "";
        for (size_t c = 0; c < n; ++c) {
            const std::string cell = c < row.size() ? row[c] : std::string();
            const std::string pad(width[c] - cell.size(), ' ');
            line += align[c] == Align::Left ? cell + pad : pad + cell;
            if (c + 1 < n) line += pipes ? " | " : " ";
        }
        if (pipes) line += " |";
        // A plain table's last column left-aligned leaves no trailing blanks.
        if (!pipes) line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    return out;
}

}  // namespace wb::cli
