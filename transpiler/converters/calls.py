"""Calls that may reach converted code → ``_lx.call(f, ...)``, which converts ``f`` too when it
is user code or a pure-Python library function laxify converts (``ir/user_code.py``:
not jax, numpy and the other array libraries, not the standard library's infrastructure);
calls that certainly reach code run as written stay as written.

Routed: plain names (not builtins, not the module's imports of library functions and classes),
methods of objects (``model.run(x)``, ``self.step(x)``, ``Cls.f(x)``), calls of call results
(``outer(3)(x)``), of subscripts (``layers[i](x)``) and of any other expression. Left alone:
builtins, chains on an imported library module (``jnp.sum(x)``, ``jax.nn.relu(x)``) or library
class, array and container methods (``x.sum()``, ``d.items()``, see ``LIBRARY_METHODS``), and
``x.at[i].set(v)``. Names are judged by what the module's globals hold when the function is
converted; a name the function binds itself (a parameter, an assignment, a free variable) may
hold anything. In a method, ``super()`` becomes ``super(__class__, self)``, which still means
the method's own class and object once moved into a generated branch or loop function.
"""

from __future__ import annotations

import functools
import types

import libcst as cst

from laxify.ir.user_code import converts_calls_of, is_library_type, keeps_module
from laxify.transpiler.analysis.features import USER_CALL, attribute_root, user_callee
from laxify.transpiler.converters.base import Context, OwnCodeConverter, parenthesized_generator, transform_above

__all__ = ["transform"]


def _runs_as_written(value: object) -> bool:
    """Whether calling ``value`` (a global of the function's module) certainly runs library code
    or instantiates a class: a class, a built-in function, a library function, or an object of
    a library type that holds no user function to convert."""
    if isinstance(value, type):
        return True
    if isinstance(value, types.FunctionType):
        return not converts_calls_of(value)
    if isinstance(value, (types.BuiltinFunctionType, types.ModuleType)):
        return True
    if isinstance(value, (types.MethodType, staticmethod, functools.partial)):
        return False
    try:
        if getattr(value, "__func__", None) is not None:  # a library's own bound method (equinox)
            return False
    except Exception:  # noqa: BLE001 - an object whose __getattr__ fails: route its calls
        return False
    return is_library_type(type(value))


def _library_root(value: object) -> bool:
    """Whether attributes of ``value`` (a global) are library code: a library module or class."""
    if isinstance(value, types.ModuleType):
        return keeps_module(value)
    return isinstance(value, type) and is_library_type(value)


class CallTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context, first_param: str | None):
        super().__init__(ctx)
        self.first_param = first_param  # `self` of a method that uses `super()`, else None

    def routed(self, func: cst.BaseExpression) -> bool:
        if isinstance(func, cst.Name):
            name = func.value
            is_global, value = self.ctx.global_value(name)
            if is_global:  # (a global that shadows a builtin included)
                return not _runs_as_written(value)
            return user_callee(func)
        if isinstance(func, cst.Attribute):
            root = attribute_root(func)
            if isinstance(root, cst.Name):
                is_global, value = self.ctx.global_value(root.value)
                if is_global and isinstance(value, (type, types.ModuleType)):
                    return not _library_root(value)  # the user's own module or class: routed
        return user_callee(func)

    def explicit_super(self, call: cst.Call) -> cst.Call:
        """``super()`` → ``super(__class__, self)``: the converted code may move it into a
        generated branch, loop function or lambda, where the implicit form would find that
        function's arguments instead of the method's. (Lambdas and comprehensions are not told
        from generated ones: a `super()` there means the method's too, as it does in Python
        3.12's inlined comprehensions, where 3.11 fails.)"""
        func = call.func
        if (
            self.first_param is None
            or call.args
            or not isinstance(func, cst.Name)
            or func.value != "super"
            or "super" in self.ctx.local_names
            or "super" in self.ctx.namespace
        ):
            return call
        return call.with_changes(args=[cst.Arg(cst.Name("__class__")), cst.Arg(cst.Name(self.first_param))])

    def leave_Call(self, original_node, updated_node):
        updated_node = self.explicit_super(updated_node)
        if not self.routed(updated_node.func):
            return updated_node
        callee = cst.Attribute(cst.Name("_lx"), cst.Name("call"))
        args = [parenthesized_generator(a) for a in updated_node.args]
        return updated_node.with_changes(func=callee, args=[cst.Arg(updated_node.func), *args])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (USER_CALL,)


def _first_param(node: cst.FunctionDef, ctx: Context) -> str | None:
    """The first parameter of a method that uses ``super()`` (``__class__`` is then one of its
    free variables), else ``None``."""
    params = [*node.params.posonly_params, *node.params.params]
    return params[0].name.value if params and "__class__" in ctx.local_names else None


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    transformer = CallTransformer(ctx, _first_param(node, ctx))
    # A walk is much cheaper than a transform: most functions call only library code, and
    # where some call is rewritten, only the nodes above it are entered.
    return transform_above(
        node,
        transformer,
        lambda n: type(n) is cst.Call and (transformer.routed(n.func) or transformer.explicit_super(n) is not n),
    )
