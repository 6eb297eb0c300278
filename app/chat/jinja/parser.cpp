#include "chat/jinja/parser.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "chat/jinja/error.h"
#include "chat/jinja/template.h"

namespace wb::chat::jinja {

namespace {

constexpr int kMaxNesting = 256;

class Parser {
  public:
    Parser(const std::vector<Token>& tokens, const std::string& name, const KnownNames& known)
        : t_(tokens), name_(name), known_(known) {}

    Body run() {
        Body body = statements({}, "", 0);
        if (cur().kind != TokenKind::End) fail(cur().line, "unexpected " + describe(cur()));
        check_names(body, false);
        return body;
    }

  private:
    // RAII nesting counter: every recursive descent passes through one.
    struct Depth {
        Parser& p;
        explicit Depth(Parser& parser, int line) : p(parser) {
            if (++p.depth_ > kMaxNesting) {
                p.fail(line,
                       "template nests deeper than " + std::to_string(kMaxNesting) + " levels");
            }
        }
        ~Depth() { --p.depth_; }
        Depth(const Depth&) = delete;
        Depth& operator=(const Depth&) = delete;
    };

    [[noreturn]] void fail(int line, const std::string& msg) const {
        throw Error(Error::Kind::Syntax, name_, line, msg);
    }

    const Token& cur() const { return t_[std::min(i_, t_.size() - 1)]; }
    const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
    void next() {
        if (i_ < t_.size() - 1) ++i_;
    }

    static std::string describe(const Token& t) {
        switch (t.kind) {
            case TokenKind::Data:
                return "text";
            case TokenKind::VarBegin:
                return "'{{'";
            case TokenKind::VarEnd:
                return "'}}'";
            case TokenKind::BlockBegin:
                return "'{%'";
            case TokenKind::BlockEnd:
                return "'%}'";
            case TokenKind::Name:
                return "'" + t.text + "'";
            case TokenKind::String:
                return "string literal";
            case TokenKind::Integer:
            case TokenKind::Float:
                return "number " + t.text;
            case TokenKind::Operator:
                return "'" + t.text + "'";
            case TokenKind::End:
                return "end of template";
        }
        return "token";
    }

    bool is_op(std::string_view op) const {
        return cur().kind == TokenKind::Operator && cur().text == op;
    }
    bool is_name(std::string_view n) const {
        return cur().kind == TokenKind::Name && cur().text == n;
    }
    void expect_op(std::string_view op) {
        if (!is_op(op))
            fail(cur().line, "expected '" + std::string(op) + "', got " + describe(cur()));
        next();
    }
    void expect_block_end(std::string_view tag) {
        if (cur().kind != TokenKind::BlockEnd) {
            fail(cur().line,
                 "expected '%}' to end the '" + std::string(tag) + "' tag, got " + describe(cur()));
        }
        next();
    }
    std::string expect_name(std::string_view what) {
        if (cur().kind != TokenKind::Name) {
            fail(cur().line, "expected " + std::string(what) + ", got " + describe(cur()));
        }
        std::string n = cur().text;
        next();
        return n;
    }

    // ---- unknown filters and tests -------------------------------------------

    // jinja2 reports an unknown filter or test at compile time, except
    // inside an {% if %} or an inline if (a "soft" frame), where the error
    // waits until the filter is called. Loops, macros, set/filter/call/with
    // blocks open inner frames, which are not soft.
    void check_names(const Expr* e, bool soft) {
        if (!e) return;
        if (e->kind == Expr::Kind::Filter && e->unknown && !soft) {
            fail(e->line, "unknown filter '" + e->name + "'");
        }
        if (e->kind == Expr::Kind::Test && e->unknown && !soft) {
            fail(e->line, "unknown test '" + e->name + "'");
        }
        const bool inner_soft = soft || e->kind == Expr::Kind::Cond;
        for (const Expr* x : {e->a.get(), e->b.get(), e->c.get(), e->d.get()})
            check_names(x, inner_soft);
        for (const ExprPtr& x : e->items) check_names(x.get(), inner_soft);
        for (const auto& [k, v] : e->pairs) {
            check_names(k.get(), inner_soft);
            check_names(v.get(), inner_soft);
        }
        for (const ExprPtr& x : e->args.positional) check_names(x.get(), inner_soft);
        for (const auto& [k, x] : e->args.keyword) check_names(x.get(), inner_soft);
    }

    void check_names(const Body& body, bool soft) {
        for (const StmtPtr& s : body) {
            check_names(s->expr.get(), soft);
            check_names(s->cond.get(), false);
            for (const ExprPtr& f : s->filters) check_names(f.get(), soft);
            for (const auto& [cond, b] : s->branches) {
                check_names(cond.get(), true);
                check_names(b, true);
            }
            const bool inner = s->kind == Stmt::Kind::If;  // else branch of an if stays soft
            check_names(s->body, false);
            check_names(s->else_body, inner);
            for (const MacroParam& p : s->params) check_names(p.default_value.get(), false);
            for (const auto& [t, x] : s->assignments) check_names(x.get(), false);
        }
    }

    // ---- statements -------------------------------------------------------

    // Parses statements until "{% <one of ends> ..." (left unconsumed) or the
    // end of input (an error when `ends` is not empty: `opener` is the tag
    // that needs it, opened at `open_line`).
    Body statements(std::initializer_list<std::string_view> ends, std::string_view opener,
                    int open_line) {
        Body body;
        while (true) {
            const Token& tok = cur();
            if (tok.kind == TokenKind::End) {
                if (ends.size() != 0) {
                    fail(open_line, "'" + std::string(opener) +
                                        "' opened here is never closed (expected '{% " +
                                        std::string(*ends.begin()) +
                                        " %}' before the end of the template)");
                }
                return body;
            }
            if (tok.kind == TokenKind::Data) {
                auto s = std::make_unique<Stmt>(Stmt::Kind::Text, tok.line);
                s->text = tok.text;
                body.push_back(std::move(s));
                next();
            } else if (tok.kind == TokenKind::VarBegin) {
                auto s = std::make_unique<Stmt>(Stmt::Kind::Output, tok.line);
                next();
                s->expr = tuple_expr(true, {}, false);
                if (cur().kind != TokenKind::VarEnd) {
                    fail(cur().line, "expected '}}' to end the expression, got " + describe(cur()));
                }
                next();
                body.push_back(std::move(s));
            } else if (tok.kind == TokenKind::BlockBegin) {
                const Token& tag = peek();
                if (tag.kind == TokenKind::Name &&
                    std::find(ends.begin(), ends.end(), tag.text) != ends.end()) {
                    return body;
                }
                next();
                body.push_back(statement());
            } else {
                fail(tok.line, "unexpected " + describe(tok));
            }
        }
    }

    // Consumes "{% name" of an end/middle tag found by statements().
    std::string take_tag() {
        next();  // {%
        std::string n = cur().text;
        next();
        return n;
    }

    StmtPtr statement() {
        const int line = cur().line;
        Depth guard(*this, line);
        if (cur().kind != TokenKind::Name)
            fail(line, "expected a tag name after '{%', got " + describe(cur()));
        const std::string tag = cur().text;
        next();
        if (tag == "if") return if_stmt(line);
        if (tag == "for") return for_stmt(line);
        if (tag == "set") return set_stmt(line);
        if (tag == "macro") return macro_stmt(line);
        if (tag == "call") return call_stmt(line);
        if (tag == "filter") return filter_stmt(line);
        if (tag == "with") return with_stmt(line);
        if (tag == "generation") {
            // transformers' AssistantTracker tag: renders its body.
            expect_block_end(tag);
            auto s = std::make_unique<Stmt>(Stmt::Kind::With, line);
            s->body = statements({"endgeneration"}, "generation", line);
            take_tag();
            expect_block_end("endgeneration");
            return s;
        }
        if (tag == "break" || tag == "continue") {
            if (loop_depth_ == 0) fail(line, "'" + tag + "' outside of a for loop");
            expect_block_end(tag);
            return std::make_unique<Stmt>(tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue,
                                          line);
        }
        static constexpr std::string_view kEnds[] = {
            "endif",     "endfor",  "endset", "endmacro", "endcall",
            "endfilter", "endwith", "elif",   "else",     "endgeneration"};
        for (const std::string_view e : kEnds) {
            if (tag == e) fail(line, "'" + tag + "' without a matching opening tag");
        }
        fail(line, "unknown or unsupported tag '" + tag + "'");
    }

    StmtPtr if_stmt(int line) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::If, line);
        ExprPtr cond = expression(true);
        expect_block_end("if");
        Body body = statements({"elif", "else", "endif"}, "if", line);
        s->branches.emplace_back(std::move(cond), std::move(body));
        while (true) {
            const std::string t = take_tag();
            if (t == "elif") {
                ExprPtr c = expression(true);
                expect_block_end("elif");
                Body b = statements({"elif", "else", "endif"}, "if", line);
                s->branches.emplace_back(std::move(c), std::move(b));
            } else if (t == "else") {
                expect_block_end("else");
                s->else_body = statements({"endif"}, "if", line);
            } else {
                expect_block_end("endif");
                return s;
            }
        }
    }

    Target assign_target(bool with_namespace, std::initializer_list<std::string_view> end_names) {
        Target t;
        if (with_namespace && cur().kind == TokenKind::Name && peek().kind == TokenKind::Operator &&
            peek().text == ".") {
            t.names.push_back(cur().text);
            next();
            next();
            t.ns_attr = expect_name("an attribute name after '.'");
            return t;
        }
        while (true) {
            t.names.push_back(expect_name("a variable name to assign to"));
            if (!is_op(",")) break;
            t.unpack = true;
            next();
            if (cur().kind == TokenKind::Name &&
                std::find(end_names.begin(), end_names.end(), cur().text) != end_names.end()) {
                break;
            }
            if (is_op("=") || cur().kind == TokenKind::BlockEnd) break;
        }
        return t;
    }

    StmtPtr for_stmt(int line) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::For, line);
        s->target = assign_target(false, {"in"});
        if (!is_name("in"))
            fail(cur().line, "expected 'in' in the for loop, got " + describe(cur()));
        next();
        s->expr = tuple_expr(false, {"recursive"}, false);
        if (is_name("if")) {
            next();
            s->cond = expression(true);
        }
        if (is_name("recursive")) {
            next();
            s->recursive = true;
        }
        expect_block_end("for");
        ++loop_depth_;
        s->body = statements({"endfor", "else"}, "for", line);
        --loop_depth_;
        if (take_tag() == "else") {
            expect_block_end("else");
            s->else_body = statements({"endfor"}, "for", line);
            take_tag();
        }
        expect_block_end("endfor");
        return s;
    }

    StmtPtr set_stmt(int line) {
        Target target = assign_target(true, {});
        if (is_op("=")) {
            next();
            auto s = std::make_unique<Stmt>(Stmt::Kind::Set, line);
            s->target = std::move(target);
            s->expr = tuple_expr(true, {}, false);
            expect_block_end("set");
            return s;
        }
        auto s = std::make_unique<Stmt>(Stmt::Kind::SetBlock, line);
        if (target.unpack) fail(line, "a block set assigns to one name");
        s->target = std::move(target);
        while (is_op("|")) {
            next();
            s->filters.push_back(filter(nullptr));
        }
        expect_block_end("set");
        s->body = statements({"endset"}, "set", line);
        take_tag();
        expect_block_end("endset");
        return s;
    }

    std::vector<MacroParam> params() {
        std::vector<MacroParam> ps;
        expect_op("(");
        while (!is_op(")")) {
            if (!ps.empty()) expect_op(",");
            if (is_op(")")) break;
            MacroParam p;
            p.name = expect_name("a parameter name");
            if (is_op("=")) {
                next();
                p.default_value = expression(true);
            } else if (!ps.empty() && ps.back().default_value) {
                fail(cur().line,
                     "parameter '" + p.name + "' without a default follows one with a default");
            }
            ps.push_back(std::move(p));
        }
        next();
        return ps;
    }

    StmtPtr macro_stmt(int line) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::Macro, line);
        s->text = expect_name("a macro name");
        s->params = params();
        expect_block_end("macro");
        const int saved = loop_depth_;
        loop_depth_ = 0;
        s->body = statements({"endmacro"}, "macro", line);
        loop_depth_ = saved;
        take_tag();
        if (cur().kind == TokenKind::Name) next();  // {% endmacro name %}
        expect_block_end("endmacro");
        return s;
    }

    StmtPtr call_stmt(int line) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::CallBlock, line);
        if (is_op("(")) s->params = params();
        s->expr = expression(true);
        if (s->expr->kind != Expr::Kind::Call)
            fail(line, "'call' needs a macro call, like {% call m() %}");
        expect_block_end("call");
        s->body = statements({"endcall"}, "call", line);
        take_tag();
        expect_block_end("endcall");
        return s;
    }

    StmtPtr filter_stmt(int line) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::FilterBlock, line);
        s->filters.push_back(filter(nullptr));
        while (is_op("|")) {
            next();
            s->filters.push_back(filter(nullptr));
        }
        expect_block_end("filter");
        s->body = statements({"endfilter"}, "filter", line);
        take_tag();
        expect_block_end("endfilter");
        return s;
    }

    StmtPtr with_stmt(int line) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::With, line);
        while (cur().kind != TokenKind::BlockEnd) {
            if (!s->assignments.empty()) expect_op(",");
            Target t = assign_target(false, {});
            expect_op("=");
            s->assignments.emplace_back(std::move(t), expression(true));
        }
        next();
        s->body = statements({"endwith"}, "with", line);
        take_tag();
        expect_block_end("endwith");
        return s;
    }

    // ---- expressions ------------------------------------------------------

    ExprPtr make(Expr::Kind k, int line) { return std::make_unique<Expr>(k, line); }

    // Fixes a finished node's height and refuses a tree deeper than
    // kMaxExpressionDepth. Chains (a + b + c, a.b.c, a|f|g, a(b)(c)) are
    // built in loops, not by recursion, so the nesting guard alone would let
    // them grow as deep as the input is long, and every later walk of the
    // tree (checking names, evaluating, freeing) recurses once per level.
    ExprPtr seal(ExprPtr e) {
        int h = 0;
        auto see = [&h](const ExprPtr& x) {
            if (x) h = std::max(h, x->height);
        };
        for (const ExprPtr* x : {&e->a, &e->b, &e->c, &e->d}) see(*x);
        for (const ExprPtr& x : e->items) see(x);
        for (const auto& [k, v] : e->pairs) {
            see(k);
            see(v);
        }
        for (const ExprPtr& x : e->args.positional) see(x);
        for (const auto& [k, x] : e->args.keyword) see(x);
        e->height = h + 1;
        if (e->height > kMaxExpressionDepth) {
            throw Error(Error::Kind::Limit, name_, e->line,
                        "expression nests deeper than " + std::to_string(kMaxExpressionDepth) +
                            " levels (each link of a chain of operators, attributes, "
                            "subscripts, calls, filters or tests counts one)");
        }
        return e;
    }

    bool tuple_end(std::initializer_list<std::string_view> extra) const {
        const Token& t = cur();
        if (t.kind == TokenKind::VarEnd || t.kind == TokenKind::BlockEnd ||
            (t.kind == TokenKind::Operator && t.text == ")")) {
            return true;
        }
        return t.kind == TokenKind::Name &&
               std::find(extra.begin(), extra.end(), t.text) != extra.end();
    }

    // jinja2 parse_tuple: "a, b" is a tuple; one item is itself.
    ExprPtr tuple_expr(bool with_condexpr, std::initializer_list<std::string_view> extra,
                       bool explicit_parens) {
        const int line = cur().line;
        std::vector<ExprPtr> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty()) expect_op(",");
            if (tuple_end(extra)) break;
            items.push_back(expression(with_condexpr));
            if (is_op(",")) {
                is_tuple = true;
            } else {
                break;
            }
        }
        if (!is_tuple) {
            if (!items.empty()) return std::move(items.front());
            if (!explicit_parens) fail(line, "expected an expression, got " + describe(cur()));
        }
        auto e = make(Expr::Kind::List, line);
        e->is_tuple = true;
        e->items = std::move(items);
        return seal(std::move(e));
    }

    ExprPtr expression(bool with_condexpr) {
        Depth guard(*this, cur().line);
        return with_condexpr ? cond_expr() : or_expr();
    }

    ExprPtr cond_expr() {
        ExprPtr e = or_expr();
        while (is_name("if")) {
            const int line = cur().line;
            next();
            auto c = make(Expr::Kind::Cond, line);
            c->a = or_expr();
            c->b = std::move(e);
            if (is_name("else")) {
                next();
                Depth guard(*this, line);  // "a if b else c if d else ..." recurses here
                c->c = cond_expr();
            }
            e = seal(std::move(c));
        }
        return e;
    }

    ExprPtr or_expr() {
        ExprPtr e = and_expr();
        while (is_name("or")) {
            auto o = make(Expr::Kind::Or, cur().line);
            next();
            o->a = std::move(e);
            o->b = and_expr();
            e = seal(std::move(o));
        }
        return e;
    }

    ExprPtr and_expr() {
        ExprPtr e = not_expr();
        while (is_name("and")) {
            auto o = make(Expr::Kind::And, cur().line);
            next();
            o->a = std::move(e);
            o->b = not_expr();
            e = seal(std::move(o));
        }
        return e;
    }

    ExprPtr not_expr() {
        if (is_name("not")) {
            Depth guard(*this, cur().line);
            auto n = make(Expr::Kind::Not, cur().line);
            next();
            n->a = not_expr();
            return seal(std::move(n));
        }
        return compare();
    }

    ExprPtr compare() {
        const int line = cur().line;
        ExprPtr first = math1();
        std::vector<ExprPtr> operands;
        std::vector<std::string> ops;
        while (true) {
            std::string op;
            if (cur().kind == TokenKind::Operator &&
                (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                 cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
                op = cur().text;
                next();
            } else if (is_name("in")) {
                op = "in";
                next();
            } else if (is_name("not") && peek().kind == TokenKind::Name && peek().text == "in") {
                op = "not in";
                next();
                next();
            } else {
                break;
            }
            ops.push_back(op);
            operands.push_back(math1());
        }
        if (ops.empty()) return first;
        auto c = make(Expr::Kind::Compare, line);
        c->items.push_back(std::move(first));
        for (auto& o : operands) c->items.push_back(std::move(o));
        c->ops = std::move(ops);
        return seal(std::move(c));
    }

    ExprPtr binary(std::string op, ExprPtr l, ExprPtr r, int line) {
        auto b = make(Expr::Kind::Binary, line);
        b->name = std::move(op);
        b->a = std::move(l);
        b->b = std::move(r);
        return seal(std::move(b));
    }

    ExprPtr math1() {
        ExprPtr e = concat();
        while (is_op("+") || is_op("-")) {
            const std::string op = cur().text;
            const int line = cur().line;
            next();
            e = binary(op, std::move(e), concat(), line);
        }
        return e;
    }

    ExprPtr concat() {
        ExprPtr e = math2();
        while (is_op("~")) {
            const int line = cur().line;
            next();
            e = binary("~", std::move(e), math2(), line);
        }
        return e;
    }

    ExprPtr math2() {
        ExprPtr e = pow_expr();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const std::string op = cur().text;
            const int line = cur().line;
            next();
            e = binary(op, std::move(e), pow_expr(), line);
        }
        return e;
    }

    ExprPtr pow_expr() {
        ExprPtr e = unary(true);
        while (is_op("**")) {
            const int line = cur().line;
            next();
            e = binary("**", std::move(e), unary(true), line);
        }
        return e;
    }

    ExprPtr unary(bool with_filter) {
        Depth guard(*this, cur().line);
        const int line = cur().line;
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            const bool neg = is_op("-");
            next();
            e = make(neg ? Expr::Kind::Neg : Expr::Kind::Pos, line);
            e->a = unary(false);
            e = seal(std::move(e));
        } else {
            e = primary();
        }
        e = postfix(std::move(e));
        if (with_filter) e = filter_expr(std::move(e));
        return e;
    }

    ExprPtr primary() {
        const Token& t = cur();
        const int line = t.line;
        if (t.kind == TokenKind::Name) {
            const std::string n = t.text;
            next();
            auto e = make(Expr::Kind::Literal, line);
            if (n == "true" || n == "True") {
                e->value = Value(true);
            } else if (n == "false" || n == "False") {
                e->value = Value(false);
            } else if (n == "none" || n == "None") {
                e->value = Value(nullptr);
            } else {
                e = make(Expr::Kind::Name, line);
                e->name = n;
            }
            return e;
        }
        if (t.kind == TokenKind::String) {
            std::string s;
            while (cur().kind == TokenKind::String) {  // adjacent literals join
                s += cur().text;
                next();
            }
            auto e = make(Expr::Kind::Literal, line);
            e->value = Value(std::move(s));
            return e;
        }
        if (t.kind == TokenKind::Integer) {
            auto e = make(Expr::Kind::Literal, line);
            errno = 0;
            char* end = nullptr;
            const long long v = std::strtoll(t.text.c_str(), &end, 10);
            if (errno == ERANGE) fail(line, "integer literal " + t.text + " does not fit 64 bits");
            e->value = Value(static_cast<int64_t>(v));
            next();
            return e;
        }
        if (t.kind == TokenKind::Float) {
            auto e = make(Expr::Kind::Literal, line);
            e->value = Value(std::strtod(t.text.c_str(), nullptr));
            next();
            return e;
        }
        if (is_op("(")) {
            next();
            ExprPtr e = tuple_expr(true, {}, true);
            expect_op(")");
            return e;
        }
        if (is_op("[")) {
            next();
            auto e = make(Expr::Kind::List, line);
            while (!is_op("]")) {
                if (!e->items.empty()) expect_op(",");
                if (is_op("]")) break;
                e->items.push_back(expression(true));
            }
            next();
            return seal(std::move(e));
        }
        if (is_op("{")) {
            next();
            auto e = make(Expr::Kind::Dict, line);
            while (!is_op("}")) {
                if (!e->pairs.empty()) expect_op(",");
                if (is_op("}")) break;
                ExprPtr k = expression(true);
                expect_op(":");
                e->pairs.emplace_back(std::move(k), expression(true));
            }
            next();
            return seal(std::move(e));
        }
        fail(line, "unexpected " + describe(t) + " where a value was expected");
    }

    ExprPtr postfix(ExprPtr e) {
        while (true) {
            if (is_op(".")) {
                const int line = cur().line;
                next();
                if (cur().kind == TokenKind::Name) {
                    auto g = make(Expr::Kind::GetAttr, line);
                    g->a = std::move(e);
                    g->name = cur().text;
                    next();
                    e = seal(std::move(g));
                } else if (cur().kind == TokenKind::Integer) {
                    auto g = make(Expr::Kind::GetItem, line);
                    g->a = std::move(e);
                    g->b = make(Expr::Kind::Literal, line);
                    g->b->value =
                        Value(static_cast<int64_t>(std::strtoll(cur().text.c_str(), nullptr, 10)));
                    next();
                    e = seal(std::move(g));
                } else {
                    fail(line, "expected an attribute name after '.', got " + describe(cur()));
                }
            } else if (is_op("[")) {
                e = subscript(std::move(e));
            } else if (is_op("(")) {
                e = call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr subscript(ExprPtr e) {
        const int line = cur().line;
        next();  // [
        std::vector<ExprPtr> parts;
        while (!is_op("]")) {
            if (!parts.empty()) expect_op(",");
            parts.push_back(subscribed());
        }
        next();
        if (parts.empty()) fail(line, "empty subscript '[]'");
        if (parts.size() == 1 && parts[0]->kind == Expr::Kind::Slice) {
            parts[0]->a = std::move(e);
            return seal(std::move(parts[0]));
        }
        // Python makes "x[1, 2:3]" a tuple holding a slice object; templates
        // have no slice values, so such a key is refused here with its line
        // rather than evaluated without an object to slice.
        for (const ExprPtr& p : parts) {
            if (parts.size() > 1 && p->kind == Expr::Kind::Slice)
                fail(p->line, "a slice inside a tuple subscript ('[a, b:c]') is not supported");
        }
        auto g = make(Expr::Kind::GetItem, line);
        g->a = std::move(e);
        if (parts.size() == 1) {
            g->b = std::move(parts[0]);
        } else {
            auto t = make(Expr::Kind::List, line);
            t->is_tuple = true;
            t->items = std::move(parts);
            g->b = seal(std::move(t));
        }
        return seal(std::move(g));
    }

    // One item inside [...]: an expression or a slice "a:b:c".
    ExprPtr subscribed() {
        const int line = cur().line;
        ExprPtr start;
        if (!is_op(":")) {
            start = expression(true);
            if (!is_op(":")) return start;
        }
        next();  // :
        auto s = make(Expr::Kind::Slice, line);
        s->b = std::move(start);
        if (!is_op("]") && !is_op(",") && !is_op(":")) s->c = expression(true);
        if (is_op(":")) {
            next();
            if (!is_op("]") && !is_op(",")) s->d = expression(true);
        }
        return seal(std::move(s));
    }

    ArgList call_args() {
        ArgList args;
        expect_op("(");
        while (!is_op(")")) {
            if (!args.positional.empty() || !args.keyword.empty()) expect_op(",");
            if (is_op(")")) break;
            if (is_op("*") || is_op("**"))
                fail(cur().line, "*args and **kwargs in calls are not supported");
            if (cur().kind == TokenKind::Name && peek().kind == TokenKind::Operator &&
                peek().text == "=") {
                std::string key = cur().text;
                next();
                next();
                args.keyword.emplace_back(std::move(key), expression(true));
            } else {
                if (!args.keyword.empty())
                    fail(cur().line, "a positional argument follows a keyword argument");
                args.positional.push_back(expression(true));
            }
        }
        next();
        return args;
    }

    ExprPtr call(ExprPtr callee) {
        auto c = make(Expr::Kind::Call, cur().line);
        c->a = std::move(callee);
        c->args = call_args();
        return seal(std::move(c));
    }

    std::string dotted_name(std::string_view what) {
        std::string n = expect_name(what);
        while (is_op(".") && peek().kind == TokenKind::Name) {
            next();
            n += "." + cur().text;
            next();
        }
        return n;
    }

    // One filter after "|" (operand null inside {% filter %} / block set).
    ExprPtr filter(ExprPtr operand) {
        const int line = cur().line;
        auto f = make(Expr::Kind::Filter, line);
        f->name = dotted_name("a filter name after '|'");
        f->unknown = !known_.filter(f->name);  // checked by check_names()
        f->a = std::move(operand);
        if (is_op("(")) f->args = call_args();
        return seal(std::move(f));
    }

    ExprPtr filter_expr(ExprPtr e) {
        while (true) {
            if (is_op("|")) {
                next();
                e = filter(std::move(e));
            } else if (is_name("is")) {
                e = test(std::move(e));
            } else if (is_op("(")) {
                e = call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr test(ExprPtr operand) {
        const int line = cur().line;
        next();  // is
        auto t = make(Expr::Kind::Test, line);
        if (is_name("not")) {
            t->negated = true;
            next();
        }
        t->name = dotted_name("a test name after 'is'");
        t->unknown = !known_.test(t->name);  // checked by check_names()
        t->a = std::move(operand);
        const Token& c = cur();
        if (is_op("(")) {
            t->args = call_args();
        } else if ((c.kind == TokenKind::Name || c.kind == TokenKind::String ||
                    c.kind == TokenKind::Integer || c.kind == TokenKind::Float || is_op("[") ||
                    is_op("{")) &&
                   !(c.kind == TokenKind::Name &&
                     (c.text == "else" || c.text == "or" || c.text == "and" || c.text == "if" ||
                      c.text == "is"))) {
            // One argument without parentheses: "x is divisibleby 3".
            if (c.kind == TokenKind::Name && c.text == "is")
                fail(c.line, "tests cannot be chained with 'is'");
            t->args.positional.push_back(postfix(primary()));
        }
        return seal(std::move(t));
    }

    const std::vector<Token>& t_;
    const std::string& name_;
    const KnownNames& known_;
    size_t i_ = 0;
    int depth_ = 0;
    int loop_depth_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, const std::string& template_name,
           const KnownNames& known) {
    return Parser(tokens, template_name, known).run();
}

}  // namespace wb::chat::jinja
