"""Rewrites the keyword arguments of Triton tl.load calls in a Python file
(issue 27). cacheadvise embeds this file and runs it with python3 from PATH
or the Python the user names (--python, CACHEADVISE_PYTHON), never a program
a capture names (docs/security.md): the file is parsed with the ast module, never with regular
expressions, so a call that spans several lines, has a trailing comma,
comments, or already carries the argument is handled as Python sees it.

Input (stdin, JSON):
  {"source": "<the file's text>",
   "edits": [{"line": L, "column": C,
              "set": {"eviction_policy": "evict_last" | null,
                      "cache_modifier": ".cg" | null}}]}
  line and column are what Triton's PTX .loc gives the call's loads: the
  line and 0-based column of its last positional argument (anchor()); a
  call is also found by the 1-based column of its "(", and, without a
  column that matches, as the one tl.load call spanning the line. A
  keyword set to null is removed (Triton's default); a keyword not named
  is left as it is.
Output (stdout, JSON):
  {"edits": [{"status": "rewritten" | "unchanged" | "not found",
              "why": "...",                  (not found)
              "first": F, "last": Lst,       (rewritten: lines F..Lst, 1-based,
              "text": "..."}]}                are replaced by text, its lines
                                              joined by newlines, no final one)
  Edits whose lines overlap are one replacement: each gets the whole range.
Exit status 0; 2 when the input is not valid or the source does not parse.
"""
import ast
import json
import sys


def load_calls(tree):
    """Every call of a .load attribute (tl.load, or any alias)."""
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "load"]


def anchor(call):
    """Where Triton's PTX places the loads of a call (.loc line and column):
    Triton 3.x's code generator leaves the location of the last positional
    argument it visited, so it is that argument's line and 0-based column
    (the pointer's, when mask and other are keywords); a call without
    positional arguments keeps its own."""
    node = call.args[-1] if call.args else call
    return node.lineno, node.col_offset


def find_call(tree, line, column):
    calls = load_calls(tree)
    if column:
        for call in calls:
            if anchor(call) == (line, column):
                return call, None
        # the column of the call's "(" (1-based), as older locations gave it
        for call in calls:
            if call.func.end_lineno == line and call.func.end_col_offset + 1 == column:
                return call, None
    spanning = [c for c in calls if c.lineno <= line <= c.end_lineno]
    if len(spanning) == 1:
        return spanning[0], None
    if not spanning:
        return None, "no tl.load call is on line %d" % line
    if not column:
        return None, "line %d has %d tl.load calls and no column tells them apart" % (
            line, len(spanning))
    return None, "no tl.load call on line %d is at column %d" % (line, column)


def main():
    try:
        req = json.load(sys.stdin)
        source = req["source"]
        edits = req["edits"]
    except (ValueError, KeyError, TypeError) as e:
        sys.stderr.write("tl_load_rewrite: bad input: %s\n" % e)
        return 2
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        sys.stderr.write("tl_load_rewrite: the source does not parse: line %s: %s\n"
                         % (e.lineno, e.msg))
        return 2
    data = source.encode("utf-8")
    # byte offset of each line's start (ast offsets are UTF-8 bytes)
    starts = [0]
    for i, b in enumerate(data):
        if b == 0x0A:
            starts.append(i + 1)

    def offset(line, col):
        return starts[line - 1] + col

    results = []
    changes = []          # (begin, end, new bytes, edit index)
    for idx, e in enumerate(edits):
        call, why = find_call(tree, int(e["line"]), int(e.get("column") or 0))
        if call is None:
            results.append({"status": "not found", "why": why})
            continue
        want = e.get("set") or {}
        mine = []
        # tl.load(pointer, mask, other, boundary_check, padding_option,
        # cache_modifier, eviction_policy, volatile): an argument given by
        # position cannot also be given by name
        positional = {"cache_modifier": 5, "eviction_policy": 6}
        taken = [n for n in want if n in positional and len(call.args) > positional[n]]
        if taken or any(isinstance(a, ast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords):
            results.append({"status": "not found",
                            "why": "the tl.load on line %d passes %s by position or through "
                                   "*args/**kwargs: rewrite it by hand" % (call.lineno,
                                   " and ".join(taken) or "its arguments")})
            continue
        have = {k.arg: k for k in call.keywords if k.arg}
        for name in sorted(want):
            value = want[name]
            kw = have.get(name)
            if kw is not None:
                cur = kw.value
                if value is None:
                    # remove "name=value" with the comma before it (or after it, if first)
                    args = list(call.args) + [k for k in call.keywords]
                    pos = args.index(kw)
                    if pos > 0:
                        prev = args[pos - 1]
                        b = offset(prev.end_lineno, prev.end_col_offset)
                        end = offset(cur.end_lineno, cur.end_col_offset)
                    else:
                        b = offset(kw.lineno, kw.col_offset)
                        if len(args) > 1:
                            nxt = args[1]
                            end = offset(nxt.lineno, nxt.col_offset)
                        else:
                            end = offset(cur.end_lineno, cur.end_col_offset)
                    mine.append((b, end, b""))
                elif not (isinstance(cur, ast.Constant) and cur.value == value):
                    mine.append((offset(cur.lineno, cur.col_offset),
                                 offset(cur.end_lineno, cur.end_col_offset),
                                 json.dumps(value).encode("utf-8")))
            elif value is not None:
                args = list(call.args) + [k for k in call.keywords]
                text = "%s=%s" % (name, json.dumps(value))
                if args:
                    last = args[-1]
                    last_end = last.value if isinstance(last, ast.keyword) else last
                    at = offset(last_end.end_lineno, last_end.end_col_offset)
                    mine.append((at, at, (", " + text).encode("utf-8")))
                else:
                    at = offset(call.end_lineno, call.end_col_offset) - 1   # before ")"
                    mine.append((at, at, text.encode("utf-8")))
        if not mine:
            results.append({"status": "unchanged"})
            continue
        results.append({"status": "rewritten", "call": [call.lineno, call.end_lineno]})
        for b, end, new in mine:
            changes.append((b, end, new, idx))

    # the changed lines of each edit, merged where they overlap
    spans = {}
    for b, end, new, idx in changes:
        first = call_line = results[idx]["call"][0]
        last = results[idx]["call"][1]
        spans.setdefault(idx, [first, last])
        spans[idx][0] = min(spans[idx][0], first, call_line)
        spans[idx][1] = max(spans[idx][1], last)
    groups = []           # [first, last, [edit indices]]
    for idx in sorted(spans, key=lambda i: spans[i][0]):
        f, l = spans[idx]
        if groups and f <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], l)
            groups[-1][2].append(idx)
        else:
            groups.append([f, l, [idx]])
    for f, l, members in groups:
        begin, end = starts[f - 1], (starts[l] - 1 if l < len(starts) else len(data))
        piece = data[begin:end]
        mine = sorted([c for c in changes if c[3] in members], key=lambda c: c[0], reverse=True)
        for b, e2, new, _ in mine:
            piece = piece[:b - begin] + new + piece[e2 - begin:]
        text = piece.decode("utf-8")
        for idx in members:
            r = results[idx]
            r.pop("call", None)
            r.update({"first": f, "last": l, "text": text})
    for r in results:
        r.pop("call", None)
    # the new source must still parse: else nothing is rewritten
    lines = source.split("\n")
    for f, l, members in reversed(groups):
        lines[f - 1:l] = results[members[0]]["text"].split("\n")
    try:
        ast.parse("\n".join(lines))
    except SyntaxError as e:
        for r in results:
            if r["status"] == "rewritten":
                r.clear()
                r.update({"status": "not found",
                          "why": "the rewritten file would not parse (line %s: %s)"
                                 % (e.lineno, e.msg)})
    json.dump({"edits": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
