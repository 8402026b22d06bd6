"""The dataflow rules of the HLS rule checker (``dataflow-body``, ``dataflow-single-access``; see
:mod:`generator.backends.hls.lint`): what a DATAFLOW region may hold, and which process reads / writes each buffer,
followed through the callees' parameters."""
from __future__ import annotations

import clang.cindex as ci

from generator.backends.hls.lint import clang_ast

K = ci.CursorKind


class DataflowRules:
    """Mixin of :class:`generator.backends.hls.lint.checker.Checker`: uses its ``add`` and ``usage_memo``."""

    # ---- rules 1 and 2
    def _plain_arg(self, a) -> bool:
        a = clang_ast.strip(a)
        if clang_ast.is_constant(a):
            return True
        if a.kind in (K.DECL_REF_EXPR,):
            return True
        if a.kind == K.UNARY_OPERATOR and clang_ast.unop(a) == "&":
            return self._plain_arg(clang_ast.children(a)[0])
        if a.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, idx = clang_ast.children(a)
            return self._plain_arg(base) and clang_ast.is_constant(idx)
        return False

    def check_dataflow(self, fn, body, name, params):
        """A DATAFLOW region holds only calls, and each array, pointer or stream in it has one writer and one reader."""
        buffers = {}   # var hash -> (name, cursor)
        for p in params:
            if clang_ast.is_buffer_type(p.type):
                buffers[p.hash] = p.spelling
        calls = []
        for st in body.get_children():
            k = st.kind
            if k == K.NULL_STMT:
                continue
            if k == K.DECL_STMT:
                for v in st.get_children():
                    if v.kind != K.VAR_DECL:
                        continue
                    init = clang_ast.var_init(v)
                    ok = init is None or clang_ast.is_constant(init)
                    if not ok:
                        s = clang_ast.strip(init)
                        ok = s.kind == K.CALL_EXPR and s.referenced is not None and \
                            s.referenced.kind == K.CONSTRUCTOR and all(clang_ast.is_constant(x) for x in s.get_arguments())
                    if not ok:
                        self.add("dataflow-body", v, name,
                                 f"declaration of '{v.spelling}' computes its initializer in the DATAFLOW region")
                    if clang_ast.is_buffer_type(v.type):
                        buffers[v.hash] = v.spelling
                continue
            e = clang_ast.strip(st) if k.is_expression() or k == K.UNEXPOSED_EXPR else st
            if e.kind == K.CALL_EXPR and e.referenced is not None and e.referenced.kind in clang_ast.FUNCS \
                    and not e.spelling.startswith("operator"):
                bad = [i for i, a in enumerate(e.get_arguments()) if not self._plain_arg(a)]
                for i in bad:
                    self.add("dataflow-body", st, name,
                             f"argument {i + 1} of the call of '{e.spelling}' computes an expression in the "
                             f"DATAFLOW region")
                calls.append(e)
                continue
            what = {K.IF_STMT: "an if statement", K.FOR_STMT: "a for loop", K.WHILE_STMT: "a while loop",
                    K.DO_STMT: "a do loop", K.RETURN_STMT: "a return statement", K.SWITCH_STMT: "a switch",
                    K.COMPOUND_STMT: "a block"}.get(e.kind)
            if what is None:
                if e.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and \
                        clang_ast.binop(e).endswith("=") and clang_ast.binop(e) not in ("==", "!=", "<=", ">="):
                    what = "an assignment"
                elif e.kind == K.CALL_EXPR and e.spelling.startswith("operator") and e.spelling.endswith("="):
                    what = "an assignment"
                elif e.kind == K.UNARY_OPERATOR and clang_ast.unop(e) in ("++", "--", "post++", "post--"):
                    what = "an increment"
                else:
                    what = "an expression that is not a call"
            self.add("dataflow-body", st, name, f"{what} in the DATAFLOW region (only calls are allowed)")
        # rule 2: who reads / writes each buffer
        access = {}   # var hash -> {"read": [(callee, line)], "write": [...]}
        for call in calls:
            callee = call.referenced
            for i, a in enumerate(call.get_arguments()):
                v = self._arg_var(a)
                if v is None or v.hash not in buffers:
                    continue
                modes = self.param_usage(callee, i)
                rec = access.setdefault(v.hash, {"read": [], "write": []})
                for m in modes:
                    if all(c != call.spelling or ln != call.location.line for c, ln in rec[m]):
                        rec[m].append((call.spelling, call.location.line))
        for h, rec in access.items():
            for m, verb in (("write", "written"), ("read", "read")):
                users = rec[m]
                if len(users) > 1:
                    who = ", ".join(f"{c} (line {ln})" for c, ln in users)
                    self.add("dataflow-single-access", users[1][1], name,
                             f"'{buffers[h]}' is {verb} by {len(users)} processes of the DATAFLOW region: {who}")

    @staticmethod
    def _arg_var(a):
        a = clang_ast.strip(a)
        while True:
            if a.kind == K.UNARY_OPERATOR and clang_ast.unop(a) in ("&", "*"):
                a = clang_ast.strip(clang_ast.children(a)[0])
            elif a.kind == K.ARRAY_SUBSCRIPT_EXPR:
                a = clang_ast.strip(clang_ast.children(a)[0])
            else:
                break
        if a.kind == K.DECL_REF_EXPR and a.referenced is not None and \
                a.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
            return a.referenced
        return None

    def param_usage(self, callee, i) -> frozenset:
        """{"read", "write"} that ``callee`` does to what its i-th parameter gives access to."""
        if callee is None:
            return frozenset({"read", "write"})
        d = callee.get_definition() or callee
        params = [c for c in d.get_children() if c.kind == K.PARM_DECL]
        if i >= len(params):
            return frozenset({"read", "write"})
        p = params[i]
        is_stream = clang_ast.is_stream_type(p.type)
        if not is_stream and p.type.kind not in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE,
                                                 ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY,
                                                 ci.TypeKind.INCOMPLETEARRAY) \
                and p.type.get_canonical().kind != ci.TypeKind.POINTER:
            return frozenset({"read"})          # by value: a copy
        if not is_stream and clang_ast.elem_const(p.type):
            return frozenset({"read"})
        body = clang_ast.body(d)
        if body is None:
            return frozenset({"read", "write"})
        key = (d.hash, i)
        if key in self.usage_memo:
            return self.usage_memo[key]
        self.usage_memo[key] = frozenset()      # recursion guard
        modes = set()
        for c, stack in clang_ast.walk(body):
            if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced == p:
                modes |= self._use(c, stack, is_stream)
        res = frozenset(modes)
        self.usage_memo[key] = res
        return res

    def _use(self, node, stack, is_stream) -> set:
        """What the expression ``node`` (a use of the parameter; ``stack`` its ancestors) does to it."""
        anc = list(stack[:-1]) if stack and stack[-1] == node else list(stack)
        # stack holds node's ancestors ending with node itself (see walk): drop it
        while anc:
            step = self._use_step(anc.pop(), node, anc, is_stream)
            if isinstance(step, set):
                return step
            node = step
        return {"read"}

    def _use_step(self, parent, node, anc, is_stream):
        """The use of ``node`` by its parent: {"read", "write"} decided, or the expression to follow up (a
        subscript, dereference or element proxy of it; ``anc`` loses the ancestors consumed)."""
        k = parent.kind
        if k in (K.PAREN_EXPR, K.UNEXPOSED_EXPR):
            return parent
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            return parent if clang_ast.children(parent)[0] == node else {"read"}
        if k == K.UNARY_OPERATOR:
            o = clang_ast.unop(parent)
            if o in ("*", "&"):
                return parent
            return {"read", "write"} if o in ("++", "--", "post++", "post--") else {"read"}
        if k in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            o = clang_ast.binop(parent)
            first = clang_ast.children(parent)[0] == node
            if first and o == "=":
                return {"write"}
            if first and k == K.COMPOUND_ASSIGNMENT_OPERATOR:
                return {"read", "write"}
            return {"read"}
        if k == K.MEMBER_REF_EXPR:
            return self._use_member(parent, anc, is_stream)
        if k == K.CALL_EXPR:
            return self._use_call_arg(parent, node, is_stream)
        if k == K.VAR_DECL:
            t = parent.type
            if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.POINTER) and not clang_ast.elem_const(t):
                return {"read", "write"}
        return {"read"}

    @staticmethod
    def _use_member(parent, anc, is_stream):
        """A member of the parameter (or of its element) is used: a stream method, an element proxy to follow
        (the call is popped off ``anc``), a field, or a method (non-const: read and written)."""
        m = parent.spelling
        call = anc[-1] if anc and anc[-1].kind == K.CALL_EXPR else None
        if is_stream:
            if m in clang_ast.STREAM_READ:
                return {"read"}
            if m in clang_ast.STREAM_WRITE:
                return {"write"}
            return set()
        if call is None:            # a field of an element
            return parent
        if m in clang_ast.PROXY_METHODS:
            anc.pop()
            return call
        r = parent.referenced
        if r is not None and r.kind == K.CXX_METHOD and not r.is_const_method() and not m.startswith("operator "):
            return {"read", "write"}
        return {"read"}

    def _use_call_arg(self, parent, node, is_stream):
        """``node`` is an argument of the call ``parent``: an overloaded operator, a constructor, or a function
        whose parameter decides (:meth:`param_usage`)."""
        args = list(parent.get_arguments())
        idx = next((j for j, a in enumerate(args) if a == node), None)
        if idx is None:
            return {"read"}
        sp = parent.spelling
        r = parent.referenced
        if sp.startswith("operator") and not sp.startswith("operator "):
            o = sp[len("operator"):]
            if idx == 0:
                if o == "=":
                    return {"write"}
                if o.endswith("=") and o not in ("==", "!=", "<=", ">="):
                    return {"read", "write"}
                if is_stream and o == ">>":
                    return {"read"}
                if is_stream and o == "<<":
                    return {"write"}
                if o in ("[]", "()"):
                    return parent
                if o in ("++", "--"):
                    return {"read", "write"}
            return {"read"}
        if r is not None and r.kind == K.CONSTRUCTOR:
            return {"read"}
        if r is not None and r.kind in clang_ast.FUNCS:
            # a member call's object is not in get_arguments; here node is argument idx
            return set(self.param_usage(r, idx))
        return {"read", "write"}
