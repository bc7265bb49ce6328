"""How a Python reproducer makes the implementation without the module that builds the target (which imports rstck).

Each factory of the target is written into the script in the first of these ways that applies:

- a class: imported by its own name (MODULE:QUALNAME);
- a lambda, or a function whose body is one `return` of an expression, over its parameters, literals, builtins and
  names each importable by its own name (a class, a module's function, a module): written out as a lambda, with those
  names imported. The lambda is compiled again and must give the very code the factory has, so the script calls what
  the kit called, not a guess at it;
- a function with a name of its own: imported by that name;
- none of these (a closure, a function of several statements, a name bound to an object the target's module made):
  the script imports the target's module and calls the factory the target holds.

The factories are read from the target object: in this process when its module is imported here already (pytest's
process imported it to collect), else in a child process (`rstck check` never loads the target outside its worker).
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import json
import os
import subprocess
import sys
from types import CodeType, FunctionType
from typing import Any

from rstck.core.evidence import importable_name
from rstck.reports.repro.parsing import compiled, parsed

FACTORIES = ("create_publisher", "create_failed_publisher", "create_subscriber", "create_whitebox_subscriber",
             "create_processor")
# How long the child that reads a target's factories may take (it imports the target's module).
READ_TIMEOUT_S = 60.0


def script_factories(target: Any) -> dict[str, Any]:
    """Each factory of `target` as a script makes it: "MODULE:QUALNAME", or [LAMBDA, {NAME: "MODULE:QUALNAME" or
    "MODULE"}], or None (only through the target's module)."""
    made = {}
    for name in FACTORIES:
        factory = getattr(target, name, None)
        if factory is not None:
            scripted = getattr(target, "scripted_factory", lambda _name, given: given)(name, factory)
            made[name] = as_scripted(scripted)
    return made


def as_scripted(factory: Any) -> Any:
    if isinstance(factory, staticmethod):  # a factory method of a test class, taken from the class body
        factory = factory.__func__
    if inspect.isclass(factory):
        return importable_name(factory)
    return written_out(factory) or importable_name(factory)


def written_out(function: Any) -> list[Any] | None:
    """[LAMBDA, NAMES] that makes what `function` makes, or None."""
    if not isinstance(function, FunctionType):
        return None
    code = function.__code__
    if code.co_freevars or function.__defaults__ or function.__kwdefaults__ or code.co_flags & inspect.CO_COROUTINE:
        return None
    found = _source(function)
    if found is None:
        return None
    text, arguments, expression = found
    if any(isinstance(node, (ast.Lambda, ast.comprehension, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom))
           for node in ast.walk(expression)):
        return None  # scopes of their own: the names below would not all be globals
    names: dict[str, str] = {}
    for node in ast.walk(expression):
        if isinstance(node, ast.Name) and node.id not in arguments:
            where = _importable(node.id, function.__globals__)
            if where is None:
                return None
            if where:
                names[node.id] = where
        if isinstance(node, ast.Attribute):  # a submodule reached through a module's attributes is imported too
            value = _value_of(node, function.__globals__)
            if inspect.ismodule(value):
                names[value.__name__] = value.__name__
    return [text, names]


def _importable(name: str, namespace: dict[str, Any]) -> str | None:
    """Where a script imports the global `name` from ("" for a builtin; None: it cannot)."""
    if name not in namespace:
        return "" if hasattr(builtins, name) else None
    value = namespace[name]
    return value.__name__ if inspect.ismodule(value) else importable_name(value)


def _value_of(node: ast.AST, namespace: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_value_of(node.value, namespace), node.attr, None)
    return None


def _source(function: FunctionType) -> tuple[str, set[str], ast.expr] | None:
    """The factory as a lambda's text, its parameters and its expression, read from its source and checked by
    compiling it again."""
    code = function.__code__
    try:
        tree = parsed(inspect.getsource(inspect.getmodule(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno:
            expression, again = node.body, f"({ast.unparse(node)})"
        elif (isinstance(node, ast.FunctionDef) and node.name == code.co_name
              and code.co_firstlineno in (node.lineno, *(d.lineno for d in node.decorator_list))):
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
                continue
            expression = body[0].value
            bare = copy.copy(node)
            bare.decorator_list = []  # the code of the function itself: a decorator's is not in it
            again = ast.unparse(bare)
        else:
            continue
        if _same_code(code, _compiled(again, code.co_name)):
            arguments = {argument.arg for argument in ast.walk(node.args) if isinstance(argument, ast.arg)}
            return f"lambda {ast.unparse(node.args)}: {ast.unparse(expression)}".replace("lambda : ", "lambda: "), \
                arguments, expression
    return None


def _compiled(text: str, name: str) -> CodeType | None:
    try:
        module = compiled(ast.fix_missing_locations(parsed(text)), "<factory>")
    except (SyntaxError, ValueError):
        return None
    return next((const for const in module.co_consts if isinstance(const, CodeType) and const.co_name == name), None)


def _same_code(code: CodeType, again: CodeType | None) -> bool:
    return again is not None and all(getattr(code, field) == getattr(again, field) for field in (
        "co_code", "co_consts", "co_names", "co_varnames", "co_argcount", "co_kwonlyargcount", "co_posonlyargcount"))


def search_path(module_name: str) -> str:
    """The folder of the project (relative to the working directory) that `module_name` was imported from when it is
    not the project's root (a test module that pytest imported from its own folder), else ""."""
    module = sys.modules.get(module_name)
    location = os.path.abspath(getattr(module, "__file__", None) or "")
    depth = module_name.count(".") + (2 if os.path.basename(location) == "__init__.py" else 1)
    folder = location
    for _ in range(depth):
        folder = os.path.dirname(folder)
    relative = os.path.relpath(folder, os.getcwd()) if location else "."
    return "" if relative == "." or relative.startswith("..") else relative


def read_factories(loaded_as: str, environment: dict[str, str]) -> dict[str, Any]:
    """{"factories": script_factories(the target), "path": [the project's folders its script imports from]} of the
    target `loaded_as` (MODULE:ATTR); {} when it cannot be read."""
    module_name = loaded_as.partition(":")[0]
    if module_name in sys.modules:
        try:
            return _read(loaded_as)
        except Exception:  # noqa: BLE001 - a target this process cannot read again: its script uses its module
            return {}
    try:
        done = subprocess.run([sys.executable, "-c", f"from {__name__} import _print; _print()", loaded_as],
                              capture_output=True, text=True, timeout=READ_TIMEOUT_S, env=environment)
        return json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return {}


def _read(loaded_as: str) -> dict[str, Any]:
    import importlib

    module_name, _, attribute = loaded_as.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    factories = script_factories(target)
    imported = [module_name, *(where.partition(":")[0] for spec in factories.values() if spec
                               for where in ([spec] if isinstance(spec, str) else spec[1].values()))]
    return {"factories": factories, "path": sorted({folder for name in imported if (folder := search_path(name))})}


def _print() -> None:
    """In the child process: the target's factories as one JSON line."""
    sys.path.insert(0, os.getcwd())  # as `rstck check` loads it: the project's root is importable
    print("\n" + json.dumps(_read(sys.argv[1])))
