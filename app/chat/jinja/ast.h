#pragma once
// Syntax tree of a parsed template (internal to the template engine). Node
// kinds follow jinja2/nodes.py for the subset chat templates use.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja/value.h"

namespace wb::chat::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

/// Arguments written in a call, filter or test: positional, then name=value.
struct ArgList {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct Expr {
    enum class Kind {
        Literal,  // value
        Name,     // name
        List,     // items (tuple: is_tuple)
        Dict,     // pairs
        GetAttr,  // a . name
        GetItem,  // a [ b ]
        Slice,    // a [ b : c : d ] (absent parts null)
        Call,     // a ( args )
        Filter,   // a | name ( args )   (a may be null inside {% filter %})
        Test,     // a is [not] name args
        Not,      // not a
        Neg,      // - a
        Pos,      // + a
        Binary,   // a op b: + - * / // % ** ~
        Compare,  // items[0] ops[0] items[1] ops[1] ... (== != < <= > >= in, not in)
        And,      // a and b
        Or,       // a or b
        Cond,     // b if a else c   (c may be null)
    };
    Kind kind;
    int line = 0;
    Value value;                   // Literal
    std::string name;              // Name, GetAttr, Filter, Test; Binary: operator text
    bool negated = false;          // Test: "is not"
    bool unknown = false;          // Filter, Test: name not known (an error when evaluated)
    bool is_tuple = false;         // List
    ExprPtr a, b, c, d;            // operands (see kinds)
    std::vector<ExprPtr> items;    // List, Compare operands
    std::vector<std::string> ops;  // Compare operators
    std::vector<std::pair<ExprPtr, ExprPtr>> pairs;  // Dict
    ArgList args;                                    // Call, Filter, Test
    int height = 1;  // levels of this tree: 1 + the highest operand's (kMaxExpressionDepth)

    Expr(Kind k, int l) : kind(k), line(l) {}
};

/// Where {% set %} and {% for %} put values: a name, names to unpack, or
/// an attribute of a namespace (ns.attr).
struct Target {
    std::vector<std::string> names;  // one name, or several to unpack
    bool unpack = false;
    std::string ns_attr;  // non-empty: names[0] is the namespace, this the attribute
};

struct MacroParam {
    std::string name;
    ExprPtr default_value;  // null: required
};

struct Stmt {
    enum class Kind {
        Text,         // text
        Output,       // {{ expr }}
        If,           // branches (cond, body); else_body
        For,          // target in expr [if cond] body [else else_body]
        Set,          // target = expr
        SetBlock,     // {% set target %} body {% endset %}, filters applied
        Macro,        // name(params) body
        CallBlock,    // {% call(params) expr %} body
        FilterBlock,  // {% filter f %} body
        With,         // {% with a = x %} body
        Break,
        Continue,
    };
    Kind kind;
    int line = 0;
    std::string text;  // Text; Macro name
    ExprPtr expr;      // Output, For (iterable), Set, CallBlock (call)
    ExprPtr cond;      // For filter
    Target target;     // For, Set, SetBlock
    std::vector<std::pair<ExprPtr, Body>> branches;  // If
    Body body;
    Body else_body;
    bool recursive = false;          // For
    std::vector<MacroParam> params;  // Macro, CallBlock
    std::vector<ExprPtr> filters;    // SetBlock, FilterBlock: Filter exprs with null operand
    std::vector<std::pair<Target, ExprPtr>> assignments;  // With

    Stmt(Kind k, int l) : kind(k), line(l) {}
};

}  // namespace wb::chat::jinja
