#pragma once
// Command-line parsing for workbench-cli subcommands. Each command describes
// itself once (CommandSpec: usage, summary, options) and gets from that both
// its parser and its --help text; the help text follows the GNU layout that
// help2man turns into a man page ("Usage:" line, description, one option per
// line as "  -m, --model FILE   text").

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wb::cli {

/// Bad command line (unknown option, missing or malformed value, wrong
/// number of arguments). main() prints what() plus a pointer to --help and
/// exits with status 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// One option. `metavar` empty = a flag without a value.
struct OptionSpec {
    std::string long_name;  ///< without dashes: "model" for --model
    char short_name = 0;    ///< 'm' for -m, 0 for none
    std::string metavar;    ///< value placeholder ("FILE", "N"); empty for flags
    std::string help;       ///< one line; mention the default here
};

/// Everything a command says about itself.
struct CommandSpec {
    std::string name;                 ///< "generate"
    std::string args_usage;           ///< positional part of the usage line: "MODEL", ""
    std::string summary;              ///< one line, for the tool's command list
    std::string description;          ///< paragraph(s) for --help (may be empty)
    std::vector<OptionSpec> options;  ///< --help/-h is added automatically
    size_t min_positional = 0;
    size_t max_positional = 0;
};

/// The parsed command line of one command. Options are looked up by their
/// long name.
class ParsedArgs {
  public:
    bool help = false;                    ///< -h/--help was given
    std::vector<std::string> positional;  ///< non-option arguments, in order

    /// Flag given?
    bool has(std::string_view long_name) const;
    /// Value of an option (the last one if repeated), or nullopt.
    std::optional<std::string> get(std::string_view long_name) const;
    /// Every value of a repeatable option, in order (e.g. compare's -m A -m B).
    std::vector<std::string> get_all(std::string_view long_name) const;
    /// Integer value in [lo, hi], or `fallback` when absent. Throws
    /// UsageError "--NAME: 'x' is not an integer in [lo, hi]".
    int64_t get_int(std::string_view long_name, int64_t fallback, int64_t lo, int64_t hi) const;
    /// Finite number in [lo, hi], or `fallback` when absent. Throws UsageError.
    double get_double(std::string_view long_name, double fallback, double lo, double hi) const;
    /// Every option given, as (long name, value) in command-line order (for
    /// options whose relative order matters, like generate's --user and
    /// --assistant turns).
    const std::vector<std::pair<std::string, std::string>>& in_order() const { return ordered_; }

  private:
    friend ParsedArgs parse_args(const CommandSpec&, const std::vector<std::string>&);
    std::multimap<std::string, std::string, std::less<>>
        values_;                                                // long name -> value ("" for flags)
    std::vector<std::pair<std::string, std::string>> ordered_;  // the same, in command-line order
};

/// Parses `argv` (the arguments after the command name) against `spec`.
/// Accepts "--name value", "--name=value", "-x value", "--" (end of
/// options). Throws UsageError for an unknown option, a missing value, a
/// value given to a flag, or a positional count outside [min, max] (not
/// checked when --help is present).
ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& argv);

/// --help text of one command (ends with a newline).
std::string help_text(const CommandSpec& spec);

}  // namespace wb::cli
