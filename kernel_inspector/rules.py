"""The rules of the source gate (gate.py): which names, attributes, expressions and constants a kernel file may
use, and the evaluator that reads module constants, defaults and autotune configs without executing the file."""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from functools import lru_cache

MAX_SOURCE_CHARS = 100_000
MAX_SOURCE_LINES = 2_000

ALLOWED_IMPORTS = ("triton", "triton.language", "math")
# Modules an attribute chain may end in (their functions and constants are what kernels call) ...
KERNEL_MODULES = ("triton.language", "triton.language.math", "triton.language.extra.libdevice",
                  "triton.language.extra.cuda.libdevice", "triton.language.extra.hip.libdevice", "math")
# ... and modules a chain may only pass through on its way to one of those.
PASS_THROUGH_MODULES = ("triton", "triton.language.extra", "triton.language.extra.cuda",
                        "triton.language.extra.hip")
TRITON_NAMES = ("jit", "autotune", "Config", "cdiv", "next_power_of_2")   # what a kernel file uses of `triton`
SAFE_BUILTINS = ("range", "min", "max", "len", "int", "float", "bool", "abs", "print", "tuple", "list",
                 "zip", "enumerate", "round", "isinstance")
FORBIDDEN_NAMES = ("getattr", "setattr", "delattr", "hasattr", "open", "exec", "eval", "compile", "globals",
                   "locals", "vars", "dir", "breakpoint", "input", "help", "memoryview", "type", "object",
                   "super", "classmethod", "staticmethod", "property", "exit", "quit", "id", "callable")
JIT_OPTIONS = ("do_not_specialize", "do_not_specialize_on_alignment", "noinline", "debug")
AUTOTUNE_OPTIONS = ("configs", "key", "warmup", "rep", "cache_results", "reset_to_zero", "restore_value")
CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
BODY_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.If, ast.For,
                   ast.While, ast.Break, ast.Continue, ast.Pass, ast.Assert)
BODY_EXPRESSIONS = (ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Compare, ast.Call, ast.Constant,
                    ast.Attribute, ast.Subscript, ast.Slice, ast.Name, ast.Tuple, ast.List, ast.Starred,
                    ast.NamedExpr, ast.JoinedStr, ast.FormattedValue, ast.keyword,
                    ast.operator, ast.cmpop, ast.boolop, ast.unaryop, ast.expr_context)
MAX_INT_BITS = 64                     # constant arithmetic in the gate never builds a larger number


@dataclass(frozen=True)
class Refusal:
    """Why a source was refused: a code from REFUSAL_CODES, where, and what (a name, a node type or a figure)."""

    code: str
    line: int
    column: int = 0
    detail: str = ""
    value: int | None = None          # a measured figure (lines, characters) where the code is about size
    limit: int | None = None


REFUSAL_CODES = ("too_large", "syntax_error", "too_complex", "import_not_allowed", "statement_not_allowed",
                 "decorator_not_allowed", "function_not_jit", "default_not_constant", "annotation_not_allowed",
                 "dunder_name", "private_attribute", "forbidden_name", "unknown_name", "module_as_value",
                 "attribute_not_allowed", "expression_not_allowed", "constant_not_allowed", "no_kernel",
                 "kernel_not_found", "name_rebound")


class SourceRefused(ValueError):
    def __init__(self, refusal: Refusal):
        super().__init__(f"{refusal.code} at line {refusal.line}: {refusal.detail}")
        self.refusal = refusal


@dataclass(frozen=True)
class Symbol:
    """A name from triton.language or math used as a value (`tl.float16`): kept as its dotted path."""

    path: str


@dataclass(frozen=True)
class ConfigSpec:
    """One `triton.Config` of an autotuned kernel."""

    constexprs: tuple                # ((name, value), ...)
    num_warps: int | None = None
    num_stages: int | None = None



def refuse(code: str, node: ast.AST | None, detail: str = "") -> SourceRefused:
    line = getattr(node, "lineno", 1) if node is not None else 1
    return SourceRefused(Refusal(code, line, getattr(node, "col_offset", 0), detail))


@lru_cache(maxsize=None)
def module_named(path: str) -> types.ModuleType:
    import importlib

    return importlib.import_module(path)


def dotted(node: ast.AST) -> list[ast.Attribute | ast.Name] | None:
    """[Name, Attribute, Attribute, ...] of an attribute chain `a.b.c`, or None when it starts elsewhere."""
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node, *reversed(chain)]


class Scope:
    """What names a file binds: module aliases (name -> module path), values imported from modules
    (name -> dotted path), constants, jit functions."""

    def __init__(self):
        self.modules: dict[str, str] = {}
        self.imported: dict[str, str] = {}
        self.constants: dict[str, object] = {}
        self.functions: set[str] = set()

    def check_chain(self, node: ast.AST) -> Symbol | None:
        """Check an attribute chain rooted at a module alias; its Symbol when it names a module member."""
        chain = dotted(node)
        if chain is None or chain[0].id not in self.modules:
            return None
        current: object = module_named(self.modules[chain[0].id])
        path = self.modules[chain[0].id]
        for step in chain[1:]:
            name = step.attr
            if name.startswith("_"):
                raise refuse("private_attribute", step, name)
            if isinstance(current, types.ModuleType):
                module_name = current.__name__
                if module_name == "triton" and name not in TRITON_NAMES + ("language",):
                    raise refuse("attribute_not_allowed", step, f"{path}.{name}")
                nxt = getattr(current, name, None)
                if nxt is None and module_name not in KERNEL_MODULES:
                    raise refuse("attribute_not_allowed", step, f"{path}.{name}")
                if isinstance(nxt, types.ModuleType):
                    if nxt.__name__ not in KERNEL_MODULES + PASS_THROUGH_MODULES:
                        raise refuse("attribute_not_allowed", step, f"{path}.{name}")
                elif module_name in PASS_THROUGH_MODULES and module_name != "triton":
                    raise refuse("attribute_not_allowed", step, f"{path}.{name}")
                current, path = nxt, f"{path}.{name}"
            else:
                path = f"{path}.{name}"
        if isinstance(current, types.ModuleType) and current.__name__ in PASS_THROUGH_MODULES:
            raise refuse("module_as_value", node, path)
        return Symbol(path)


def check_name(scope: Scope, node: ast.Name, local: set[str]) -> None:
    name = node.id
    if name.startswith("__"):
        raise refuse("dunder_name", node, name)
    if name in scope.modules:
        raise refuse("module_as_value", node, name)
    if name in FORBIDDEN_NAMES:
        raise refuse("forbidden_name", node, name)
    if isinstance(node.ctx, ast.Load) and not (name in local or name in scope.constants or name in scope.imported
                                               or name in scope.functions or name in SAFE_BUILTINS):
        raise refuse("unknown_name", node, name)


def check_expression(scope: Scope, node: ast.AST, local: set[str]) -> None:
    """Refuse anything in an expression of a body outside BODY_EXPRESSIONS and the naming rules."""
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            raise refuse("private_attribute", node, node.attr)
        chain = dotted(node)
        if chain is not None and chain[0].id in scope.modules:
            scope.check_chain(node)
            return
        check_expression(scope, node.value, local)
        return
    if isinstance(node, ast.Name):
        check_name(scope, node, local)
        return
    if not isinstance(node, BODY_EXPRESSIONS):
        raise refuse("expression_not_allowed", node, type(node).__name__)
    for child in ast.iter_child_nodes(node):
        check_expression(scope, child, local)


def bound_names(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def check_body(scope: Scope, statements: list[ast.stmt], local: set[str]) -> None:
    for stmt in statements:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            raise refuse("import_not_allowed", stmt, "import")
        if not isinstance(stmt, BODY_STATEMENTS):
            raise refuse("statement_not_allowed", stmt, type(stmt).__name__)
        for field, value in ast.iter_fields(stmt):
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.stmt):
                    continue
                if isinstance(item, ast.AST):
                    check_expression(scope, item, local)
        for block in ("body", "orelse"):
            if hasattr(stmt, block):
                check_body(scope, getattr(stmt, block), local)


def constant_value(scope: Scope, node: ast.AST) -> object:
    """The value of a constant expression, computed without executing the file: numbers, strings, bools,
    None, tuples/lists of them, names of earlier constants, module members (`tl.float16`, as a Symbol),
    `tl.constexpr(v)` (v) and `triton.Config({...}, num_warps=...)` (a ConfigSpec)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float, str, bool, type(None))):
            if isinstance(node.value, int) and abs(node.value).bit_length() > MAX_INT_BITS:
                raise refuse("constant_not_allowed", node, "int")
            return node.value
        raise refuse("constant_not_allowed", node, type(node.value).__name__)
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [constant_value(scope, e) for e in node.elts]
        return tuple(values) if isinstance(node, ast.Tuple) else values
    if isinstance(node, ast.Name):
        if node.id.startswith("__"):
            raise refuse("dunder_name", node, node.id)
        if node.id in scope.constants:
            return scope.constants[node.id]
        if node.id in scope.imported:
            return Symbol(scope.imported[node.id])
        raise refuse("default_not_constant", node, node.id)
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            raise refuse("private_attribute", node, node.attr)
        symbol = scope.check_chain(node)
        if symbol is None:
            raise refuse("default_not_constant", node, ast.unparse(node))
        return symbol
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        value = constant_value(scope, node.operand)
        if not isinstance(value, (int, float, bool)):
            raise refuse("default_not_constant", node, ast.unparse(node))
        return {ast.USub: lambda v: -v, ast.UAdd: lambda v: +v, ast.Not: lambda v: not v}[type(node.op)](value)
    if isinstance(node, ast.BinOp):
        return _constant_arithmetic(scope, node)
    if isinstance(node, ast.Call):
        return _constant_call(scope, node)
    raise refuse("default_not_constant", node, type(node).__name__)


def _constant_arithmetic(scope: Scope, node: ast.BinOp) -> object:
    left, right = constant_value(scope, node.left), constant_value(scope, node.right)
    numbers = (int, float)
    if not (isinstance(left, numbers) and isinstance(right, numbers)):
        raise refuse("default_not_constant", node, ast.unparse(node))
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
           ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b}
    if type(node.op) not in ops:
        raise refuse("default_not_constant", node, type(node.op).__name__)
    if isinstance(node.op, (ast.Pow, ast.LShift)) and not (isinstance(right, int) and 0 <= right <= MAX_INT_BITS):
        raise refuse("constant_not_allowed", node, ast.unparse(node))
    try:
        value = ops[type(node.op)](left, right)
    except (ArithmeticError, ValueError) as exc:
        raise refuse("constant_not_allowed", node, type(exc).__name__) from None
    if isinstance(value, int) and abs(value).bit_length() > MAX_INT_BITS:
        raise refuse("constant_not_allowed", node, "int")
    return value


def _constant_call(scope: Scope, node: ast.Call) -> object:
    symbol = scope.check_chain(node.func) if isinstance(node.func, ast.Attribute) else (
        Symbol(scope.imported[node.func.id]) if isinstance(node.func, ast.Name) and node.func.id in scope.imported
        else None)
    if symbol is None:
        raise refuse("default_not_constant", node, ast.unparse(node.func))
    if symbol.path.endswith(".constexpr") and len(node.args) == 1 and not node.keywords:
        return constant_value(scope, node.args[0])
    if symbol.path == "triton.Config":
        if not node.args or not isinstance(node.args[0], ast.Dict):
            raise refuse("default_not_constant", node, "Config")
        pairs = []
        for key, value in zip(node.args[0].keys, node.args[0].values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise refuse("default_not_constant", node, "Config")
            pairs.append((key.value, constant_value(scope, value)))
        options = {}
        for kw in node.keywords:
            if kw.arg not in CONFIG_OPTIONS:
                raise refuse("default_not_constant", kw.value, str(kw.arg))
            options[kw.arg] = constant_value(scope, kw.value)
        return ConfigSpec(tuple(pairs), options.get("num_warps"), options.get("num_stages"))
    raise refuse("default_not_constant", node, symbol.path)
