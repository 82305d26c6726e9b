"""The source gate: what a pasted kernel file may contain before anything of it is executed.

Compiling a Triton kernel runs Python: importing the file runs its top level, decorators, default values
and annotations; the interpreter runs the whole body. So a pasted file is read with `ast` first, and only
what a kernel file needs is accepted:

- imports of `triton`, `triton.language` and `math` (and names from them);
- module-level constants (numbers, strings, tuples, `tl.constexpr(...)`, `triton.Config(...)` lists);
- `@triton.jit` functions, optionally under `@triton.autotune(configs=..., key=...)`;
- in bodies, defaults and annotations: no dunder names, no attribute starting with `_`, no name the file
  does not define (so no `getattr`, `open`, `exec`, `eval`, `__import__`, `globals`, `os`, ...), modules
  only as the start of an attribute chain that stays inside triton.language (so no alias of a module and
  no walk from triton into the modules it imports).

Anything else is refused with the line it is on, as a `Refusal` (a code and figures, no sentences): the
page words it. The file's size is bounded before it is parsed.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass

from kernel_inspector.rules import (ALLOWED_IMPORTS, AUTOTUNE_OPTIONS, FORBIDDEN_NAMES, JIT_OPTIONS, KERNEL_MODULES,
                                          MAX_SOURCE_CHARS, MAX_SOURCE_LINES, SAFE_BUILTINS, TRITON_NAMES, ConfigSpec,
                                          Refusal, Scope, SourceRefused, bound_names, check_body, constant_value,
                                          module_named, refuse)

@dataclass(frozen=True)
class Param:
    name: str
    constexpr: bool                  # annotated tl.constexpr
    annotation: str | None           # the annotation's source text
    has_default: bool
    default: object = None


@dataclass(frozen=True)
class KernelInfo:
    name: str
    line: int                        # the `def` line
    params: tuple[Param, ...]
    configs: tuple[ConfigSpec, ...] = ()     # autotune configs; empty for a plain @triton.jit
    autotune_key: tuple[str, ...] = ()
    do_not_specialize: tuple[str, ...] = ()               # @triton.jit(do_not_specialize=...), as names
    do_not_specialize_on_alignment: tuple[str, ...] = ()


@dataclass(frozen=True)
class KernelFile:
    source: str
    kernels: tuple[KernelInfo, ...]  # every @triton.jit function, in file order
    constants: tuple                 # ((name, value), ...) module-level constants

    def kernel(self, name: str | None = None) -> KernelInfo:
        """The named kernel, or the last one in the file (helpers come before the kernel that calls them)."""
        if not self.kernels:
            raise SourceRefused(Refusal("no_kernel", 1))
        if name is None:
            return self.kernels[-1]
        for info in self.kernels:
            if info.name == name:
                return info
        raise SourceRefused(Refusal("kernel_not_found", 1, detail=name))


def _check_new_name(scope: Scope, node: ast.AST, name: str, kind: str) -> None:
    """A module-level name means one thing for the whole file: `jit = tl.static_print` after `from triton import
    jit` would make `@jit` mean something other than what the gate read it as, so a second binding of a name
    as another kind of thing (an import, a constant, a function) is refused. A constant may be set again."""
    kinds = {"import": set(scope.imported) | set(scope.modules), "constant": set(scope.constants),
             "function": scope.functions}
    if any(name in names for other, names in kinds.items() if other != kind) or \
            (kind != "constant" and name in kinds[kind]):
        raise refuse("name_rebound", node, name)


def _check_import(scope: Scope, stmt: ast.stmt) -> None:
    for alias in stmt.names:
        bound = alias.asname or (alias.name.split(".")[0] if isinstance(stmt, ast.Import) else alias.name)
        if bound != "*":
            _check_new_name(scope, stmt, bound, "import")
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.name not in ALLOWED_IMPORTS:
                raise refuse("import_not_allowed", stmt, alias.name)
            if alias.asname:
                scope.modules[alias.asname] = alias.name
            else:        # `import triton.language` binds `triton`
                scope.modules[alias.name.split(".")[0]] = alias.name.split(".")[0]
        return
    if stmt.module not in ALLOWED_IMPORTS or stmt.level:
        raise refuse("import_not_allowed", stmt, "." * stmt.level + (stmt.module or ""))
    module = module_named(stmt.module)
    for alias in stmt.names:
        name = alias.name
        if name == "*" or name.startswith("_"):
            raise refuse("import_not_allowed", stmt, f"{stmt.module}.{name}")
        if stmt.module == "triton" and name not in TRITON_NAMES + ("language",):
            raise refuse("import_not_allowed", stmt, f"{stmt.module}.{name}")
        value = getattr(module, name, None)
        bound = alias.asname or name
        if isinstance(value, types.ModuleType):
            if value.__name__ not in KERNEL_MODULES:
                raise refuse("import_not_allowed", stmt, f"{stmt.module}.{name}")
            scope.modules[bound] = value.__name__
        elif value is None:
            raise refuse("import_not_allowed", stmt, f"{stmt.module}.{name}")
        else:
            scope.imported[bound] = f"{stmt.module}.{name}"


def _decorator_symbol(scope: Scope, node: ast.AST) -> str | None:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name) and target.id in scope.imported:
        return scope.imported[target.id]
    if isinstance(target, ast.Attribute):
        symbol = scope.check_chain(target)
        return symbol.path if symbol else None
    return None


def _check_options(scope: Scope, call: ast.Call, allowed: tuple[str, ...]) -> dict:
    if call.args:
        raise refuse("decorator_not_allowed", call, "positional")
    options = {}
    for kw in call.keywords:
        if kw.arg not in allowed:
            raise refuse("decorator_not_allowed", kw.value, str(kw.arg))
        options[kw.arg] = constant_value(scope, kw.value)
    return options


def _kernel_info(scope: Scope, fn: ast.FunctionDef) -> KernelInfo:
    paths = [_decorator_symbol(scope, d) for d in fn.decorator_list]
    if not paths or paths[-1] != "triton.jit" or any(p not in ("triton.jit", "triton.autotune") for p in paths) \
            or len(paths) > 2 or (len(paths) == 2 and paths[0] != "triton.autotune"):
        bad = next((d for d, p in zip(fn.decorator_list, paths) if p not in ("triton.jit", "triton.autotune")), fn)
        raise refuse("function_not_jit" if not fn.decorator_list else "decorator_not_allowed", bad, fn.name)
    configs, key, jit_options = (), (), {}
    for decorator, path in zip(fn.decorator_list, paths):
        if isinstance(decorator, ast.Call):
            options = _check_options(scope, decorator, AUTOTUNE_OPTIONS if path == "triton.autotune" else JIT_OPTIONS)
            if path == "triton.autotune":
                configs = tuple(options.get("configs") or ())
                if not configs or not all(isinstance(c, ConfigSpec) for c in configs):
                    raise refuse("decorator_not_allowed", decorator, "configs")
                key = tuple(str(k) for k in options.get("key") or ())
            else:
                jit_options = options
        elif path == "triton.autotune":
            raise refuse("decorator_not_allowed", decorator, "autotune")
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise refuse("statement_not_allowed", fn, "arguments")
    if fn.returns is not None:
        raise refuse("annotation_not_allowed", fn.returns, "return")
    defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
    params = []
    for arg, default in zip(args.args, defaults):
        if arg.arg.startswith("__"):
            raise refuse("dunder_name", arg, arg.arg)
        annotation = None
        if arg.annotation is not None:
            node = arg.annotation
            is_chain = isinstance(node, ast.Attribute) and scope.check_chain(node) is not None
            if not (is_chain or (isinstance(node, ast.Name) and node.id in scope.imported)
                    or (isinstance(node, ast.Constant) and isinstance(node.value, str))):
                raise refuse("annotation_not_allowed", node, ast.unparse(node)[:80])
            annotation = ast.unparse(node)
        value = constant_value(scope, default) if default is not None else None
        constexpr = annotation is not None and annotation.split(".")[-1].strip("'\"") == "constexpr"
        params.append(Param(arg.arg, constexpr, annotation, default is not None, value))
    check_body(scope, fn.body, bound_names(fn))
    names = [p.name for p in params]

    def as_names(option: str) -> tuple[str, ...]:
        # Triton takes parameter names or indices; anything else names nothing
        given = jit_options.get(option) or ()
        given = given if isinstance(given, (tuple, list)) else (given,)
        return tuple(names[g] if isinstance(g, int) and 0 <= g < len(names) else g for g in given
                     if (isinstance(g, int) and 0 <= g < len(names)) or g in names)

    return KernelInfo(fn.name, fn.lineno, tuple(params), configs, key, as_names("do_not_specialize"),
                      as_names("do_not_specialize_on_alignment"))


def _module_constant(scope: Scope, stmt: ast.stmt) -> None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        raise refuse("statement_not_allowed", stmt, "AnnAssign")
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        raise refuse("statement_not_allowed", stmt, "Assign")
    name = targets[0].id
    if name.startswith("__"):
        raise refuse("dunder_name", targets[0], name)
    if name in scope.modules or name in FORBIDDEN_NAMES:
        raise refuse("forbidden_name" if name in FORBIDDEN_NAMES else "module_as_value", targets[0], name)
    _check_new_name(scope, targets[0], name, "constant")
    if isinstance(stmt, ast.AnnAssign):
        node = stmt.annotation
        if not ((isinstance(node, ast.Attribute) and scope.check_chain(node) is not None)
                or (isinstance(node, ast.Name) and (node.id in scope.imported or node.id in SAFE_BUILTINS))):
            raise refuse("annotation_not_allowed", node, ast.unparse(node)[:80])
    scope.constants[name] = constant_value(scope, stmt.value)


def check_source(text: str) -> KernelFile:
    """Accept `text` as a kernel file, or raise SourceRefused naming the first line that is not allowed."""
    if len(text) > MAX_SOURCE_CHARS:
        raise SourceRefused(Refusal("too_large", 1, detail="characters", value=len(text), limit=MAX_SOURCE_CHARS))
    lines = text.count("\n") + 1
    if lines > MAX_SOURCE_LINES:
        raise SourceRefused(Refusal("too_large", 1, detail="lines", value=lines, limit=MAX_SOURCE_LINES))
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise SourceRefused(Refusal("syntax_error", exc.lineno or 1, (exc.offset or 1) - 1, exc.msg)) from None
    except (ValueError, MemoryError, RecursionError) as exc:
        raise SourceRefused(Refusal("syntax_error", 1, 0, type(exc).__name__)) from None
    try:
        return _check_module(tree, text)
    except RecursionError:
        raise SourceRefused(Refusal("too_complex", 1)) from None


def _check_module(tree: ast.Module, text: str) -> KernelFile:
    scope = Scope()
    kernels = []
    for index, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _check_import(scope, stmt)
        elif isinstance(stmt, ast.FunctionDef):
            if stmt.name.startswith("__") or stmt.name in FORBIDDEN_NAMES:
                raise refuse("dunder_name" if stmt.name.startswith("__") else "forbidden_name", stmt, stmt.name)
            _check_new_name(scope, stmt, stmt.name, "function")
            scope.functions.add(stmt.name)   # before its body: a kernel may call itself only by error, but
            kernels.append(_kernel_info(scope, stmt))   # helpers defined above it are known
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            _module_constant(scope, stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue   # a docstring or a comment-like string
        else:
            raise refuse("statement_not_allowed", stmt, type(stmt).__name__)
    return KernelFile(text, tuple(kernels), tuple(scope.constants.items()))
