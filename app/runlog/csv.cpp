#include "runlog/csv.h"

#include <string>

#include "runlog/utf8.h"

namespace wb::runlog {

void write_csv_field(std::ostream& out, std::string_view f) {
    // The export promises UTF-8: invalid bytes become U+FFFD (rare; the
    // detokenizer emits only whole UTF-8 characters).
    std::string fixed;
    if (!is_valid_utf8(f)) {
        fixed = to_valid_utf8(f);
        f = fixed;
    }
    const bool quote = f.find_first_of(",\"\r\n") != std::string_view::npos ||
                       (!f.empty() && (f.front() == ' ' || f.back() == ' '));
    if (!quote) {
        out.write(f.data(), static_cast<std::streamsize>(f.size()));
        return;
    }
    out.put('"');
    size_t start = 0;
    for (size_t q = f.find('"'); q != std::string_view::npos; q = f.find('"', start)) {
        out.write(f.data() + start, static_cast<std::streamsize>(q + 1 - start));
        out.put('"');  // the doubled quote
        start = q + 1;
    }
    out.write(f.data() + start, static_cast<std::streamsize>(f.size() - start));
    out.put('"');
}

}  // namespace wb::runlog
