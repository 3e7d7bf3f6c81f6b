"""Rewrites the keyword arguments of Triton tl.load calls in a Python file
(issue 27). cacheadvise embeds this file and runs it with python3 from PATH
or the Python the user names (--python, CACHEADVISE_PYTHON), never a program
a capture names (docs/security.md): the file is parsed with the ast module, never with regular
expressions, so a call that spans several lines, has a trailing comma,
comments, or already carries the argument is handled as Python sees it.

The file is taken as bytes and decoded as Python decodes it (a UTF-8 BOM,
a PEP 263 coding line, tokenize.detect_encoding); its own encoding, BOM
and line ends (LF, CRLF or CR) are kept in what is rewritten, and every
byte outside the changed arguments is left as it was (issue 36).

Input (stdin, JSON):
  {"source_bytes": "<the file's bytes, each as the code point of its value
                    (bytes.decode('latin-1'))>",
   (or "source": "<the file's text>", taken as UTF-8),
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
              "text_bytes": "...",            are replaced by text_bytes, in
              "text": "..."}]}                the bytes mapping of the input,
                                              joined by newlines, no final one;
                                              text is the same, decoded)
  Lines here are the file's bytes split at "\n", as a unified diff counts
  them (a file of CR line ends is one line); line and column of the input
  are Python's. Edits whose lines overlap are one replacement: each gets
  the whole range.
Exit status 0; 2 when the input is not valid or the source cannot be
decoded or parsed (one line on stderr says why, never a traceback).
"""
import ast
import bisect
import codecs
import io
import json
import re
import sys
import tokenize


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


class Source:
    """A Python file's bytes, decoded as Python decodes them, with the two
    ways of counting its lines: Python's (LF, CRLF and CR each end one),
    which ast positions use, and the unified diff's ("\\n" alone)."""

    def __init__(self, raw):
        self.raw = raw
        enc, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        self.bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
        self.codec = "utf-8" if enc == "utf-8-sig" else enc
        self.text = raw[self.bom:].decode(self.codec)
        if self.text.encode(self.codec) != raw[self.bom:]:
            raise ValueError("its encoding (%s) does not give back its bytes" % enc)
        # Python's lines: their text and the byte offset where each starts
        self.lines, self.line_bytes = [], []
        at, pos = self.bom, 0
        for m in re.finditer(r"\r\n|\r|\n", self.text):
            self.lines.append(self.text[pos:m.start()])
            self.line_bytes.append(at)
            at += len(self.text[pos:m.end()].encode(self.codec))
            pos = m.end()
        self.lines.append(self.text[pos:])
        self.line_bytes.append(at)
        # the diff's lines: where each "\n" is
        self.newlines = [m.start() for m in re.finditer(b"\n", raw)]

    def offset(self, line, col):
        """The byte of the file at ast's line and col (UTF-8 bytes into the line)."""
        text = self.lines[line - 1]
        chars = len(text.encode("utf-8")[:col].decode("utf-8", "ignore"))
        return self.line_bytes[line - 1] + len(text[:chars].encode(self.codec))

    def diff_line(self, offset):
        """The diff's line (1-based) that byte offset is on."""
        return bisect.bisect_left(self.newlines, offset) + 1

    def diff_span(self, first, last):
        """The bytes of the diff's lines first..last, without the last "\\n"."""
        begin = self.newlines[first - 2] + 1 if first > 1 else 0
        end = self.newlines[last - 1] if last - 1 < len(self.newlines) else len(self.raw)
        return begin, end


def parse(text):
    """ast.parse, or None and why not in one line."""
    try:
        return ast.parse(text), None
    except SyntaxError as e:
        return None, "line %s: %s" % (e.lineno, e.msg)
    except RecursionError:
        return None, "it is nested too deeply for Python's parser"
    except MemoryError:
        return None, "it is nested too deeply for Python's parser (out of memory)"
    except ValueError as e:             # a NUL byte, before Python 3.12
        return None, str(e)


def run():
    try:
        req = json.load(sys.stdin)
        if "source_bytes" in req:
            raw = req["source_bytes"].encode("latin-1")
        else:
            raw = req["source"].encode("utf-8")
        edits = req["edits"]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        sys.stderr.write("tl_load_rewrite: bad input: %s\n" % e)
        return 2
    try:
        src = Source(raw)
    except (SyntaxError, ValueError, LookupError) as e:
        sys.stderr.write("tl_load_rewrite: the source cannot be decoded: %s\n"
                         % (e.msg if isinstance(e, SyntaxError) else e))
        return 2
    tree, why = parse(src.text)
    if tree is None:
        sys.stderr.write("tl_load_rewrite: the source does not parse: %s\n" % why)
        return 2
    offset = src.offset

    results = []
    changes = []          # (begin, end, new bytes, edit index): bytes of the file
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
                                 json.dumps(value).encode(src.codec)))
            elif value is not None:
                args = list(call.args) + [k for k in call.keywords]
                text = "%s=%s" % (name, json.dumps(value))
                if args:
                    last = args[-1]
                    last_end = last.value if isinstance(last, ast.keyword) else last
                    at = offset(last_end.end_lineno, last_end.end_col_offset)
                    mine.append((at, at, (", " + text).encode(src.codec)))
                else:
                    at = offset(call.end_lineno, call.end_col_offset) - 1   # before ")"
                    mine.append((at, at, text.encode(src.codec)))
        if not mine:
            results.append({"status": "unchanged"})
            continue
        # the call's lines, as the diff counts them
        results.append({"status": "rewritten",
                        "call": [src.diff_line(offset(call.lineno, call.col_offset)),
                                 src.diff_line(offset(call.end_lineno, call.end_col_offset))]})
        for b, end, new in mine:
            changes.append((b, end, new, idx))

    # the changed lines of each edit, merged where they overlap
    spans = {}
    for b, end, new, idx in changes:
        spans[idx] = list(results[idx]["call"])
    groups = []           # [first, last, [edit indices]]
    for idx in sorted(spans, key=lambda i: spans[i][0]):
        f, l = spans[idx]
        if groups and f <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], l)
            groups[-1][2].append(idx)
        else:
            groups.append([f, l, [idx]])
    for f, l, members in groups:
        begin, end = src.diff_span(f, l)
        piece = src.raw[begin:end]
        mine = sorted([c for c in changes if c[3] in members], key=lambda c: c[0], reverse=True)
        for b, e2, new, _ in mine:
            piece = piece[:b - begin] + new + piece[e2 - begin:]
        for idx in members:
            r = results[idx]
            r.pop("call", None)
            r.update({"first": f, "last": l, "text_bytes": piece.decode("latin-1"),
                      "text": piece.decode(src.codec, "replace")})
    for r in results:
        r.pop("call", None)
    # the new source must still parse: else nothing is rewritten
    new = src.raw
    for b, e2, piece, _ in sorted(changes, key=lambda c: c[0], reverse=True):
        new = new[:b] + piece + new[e2:]
    _, why = parse(new[src.bom:].decode(src.codec, "replace"))
    if why:
        for r in results:
            if r["status"] == "rewritten":
                r.clear()
                r.update({"status": "not found",
                          "why": "the rewritten file would not parse (%s)" % why})
    json.dump({"edits": results}, sys.stdout)
    return 0


def main():
    try:
        return run()
    except Exception as e:      # a reason of one line, never a traceback
        sys.stderr.write("tl_load_rewrite: cannot rewrite the file: %s: %s\n"
                         % (type(e).__name__, e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
