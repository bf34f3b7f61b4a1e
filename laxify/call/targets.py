"""What ``to_static`` and ``convert`` can be given, and the function under it: functions,
bound methods, partials, objects with a Python ``__call__``, C functions with a pure-Python
twin; the plain function under bound methods and partials with the arguments they bind; and
Python's own ``TypeError`` for arguments that do not fit it."""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

from laxify.conversion import convert_function
from laxify.runtime.compile import converted_from
from laxify.runtime.pure_twins import pure_twin

__all__ = [
    "Converted",
    "as_method",
    "callable_target",
    "convert_callable",
    "function_and_arguments",
    "python_call_error",
]


class Converted:
    """A function laxify made from ``python_function`` (``to_static``'s ``StaticFunction``): what
    it is given back as is the function under it."""

    python_function: Callable


def _describe(value: Any) -> str:
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    text = repr(value)
    article = "an" if name[0] in "aeiou" else "a"
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({article} {name} object)"


def callable_target(fn: Any, api: str) -> Callable:
    """The callable ``api`` converts for ``fn``: ``fn`` itself, or the bound ``__call__`` of an
    object that defines one. Non-callables and classes are a TypeError saying what to pass."""
    if isinstance(fn, type):
        raise TypeError(
            f"{api} expects a function, got the class {fn.__qualname__}. Decorate one of its "
            f"methods (for example __call__), or pass an instance whose class defines __call__."
        )
    if not callable(fn):
        raise TypeError(
            f"{api} expects a function, got {_describe(fn)}. Pass a Python function (def or "
            f"lambda), a method, or an object whose class defines __call__."
        )
    if isinstance(fn, types.BuiltinFunctionType):
        # A C function of the standard library with a pure-Python twin (bisect.bisect_left):
        # the twin, which the module documents as its equivalent, is converted.
        return pure_twin(fn) or fn
    if isinstance(fn, types.FunctionType):
        # A function laxify converted (`to_static(convert(f))`): the user's function it came from.
        return converted_from(fn) or fn
    if isinstance(fn, types.MethodType) and converted_from(fn.__func__) is not None:
        return types.MethodType(converted_from(fn.__func__), fn.__self__)
    if isinstance(fn, (types.MethodType, functools.partial, Converted)):
        return fn
    method = as_method(fn)
    if method is not None:
        return method
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, (types.FunctionType, Converted)):
        # An object with a Python __call__: its bound method.
        return as_method(fn.__call__) or fn.__call__
    return fn


def as_method(fn: Any) -> types.MethodType | None:
    """A bound method that a library made its own way (``eqx_model.__call__`` is a pytree of
    Equinox's with ``__func__`` and ``__self__``) as a Python bound method; else ``None``."""
    if isinstance(fn, types.MethodType):
        return fn
    func, obj = getattr(fn, "__func__", None), getattr(fn, "__self__", None)
    if obj is not None and isinstance(func, (types.FunctionType, Converted)):
        return types.MethodType(func, obj)
    return None


def convert_callable(fn: Callable, locate_fallbacks: bool = True) -> Callable:
    """``fn`` converted: Python functions, bound methods (bound to the same object), partials
    (with the same arguments); anything else is a ConversionError saying why."""
    if isinstance(fn, Converted):
        fn = fn.python_function
    if isinstance(fn, types.FunctionType):
        fn = converted_from(fn) or fn  # converted already: from the user's function
    if getattr(fn, "__laxify_do_not_convert__", False):
        return fn
    if isinstance(fn, types.MethodType):
        return types.MethodType(convert_callable(fn.__func__, locate_fallbacks), fn.__self__)
    if isinstance(fn, functools.partial):
        return functools.partial(convert_callable(fn.func, locate_fallbacks), *fn.args, **fn.keywords)
    return convert_function(fn).bind(fn, locate_fallbacks)


def function_and_arguments(fn: Callable, args: tuple, kwargs: dict):
    """The plain function under bound methods and partials, with the arguments they bind."""
    if isinstance(fn, Converted):
        return function_and_arguments(fn.python_function, args, kwargs)
    if isinstance(fn, types.MethodType):
        return function_and_arguments(fn.__func__, (fn.__self__, *args), kwargs)
    if isinstance(fn, functools.partial):
        return function_and_arguments(fn.func, (*fn.args, *args), {**fn.keywords, **kwargs})
    return fn, args, kwargs


def python_call_error(fn: Callable, args: tuple, kwargs: dict) -> TypeError | None:
    """The TypeError Python raises for calling ``fn`` with these arguments (missing, extra or
    unknown ones: ``f() got an unexpected keyword argument 'z'``), or ``None`` if they bind."""
    fn, args, kwargs = function_and_arguments(fn, args, kwargs)
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    stub = types.FunctionType(_signature_stub(code), {}, code.co_name, fn.__defaults__)
    stub.__kwdefaults__ = fn.__kwdefaults__
    try:
        stub(*args, **kwargs)
    except TypeError as e:
        return e.with_traceback(None)
    return None


def _signature_stub(code: types.CodeType) -> types.CodeType:
    """A code object with ``code``'s parameters, name and qualified name, and an empty body:
    calling it binds arguments exactly as ``code`` does, and runs nothing. (Parameter names are
    identifiers read from ``code``, so the one-line ``def`` is safe to compile.)"""
    names, flags = code.co_varnames, code.co_flags
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    params = list(names[: code.co_posonlyargcount])
    if params:
        params.append("/")
    params += names[code.co_posonlyargcount : positional]
    rest = positional + keyword_only
    if flags & inspect.CO_VARARGS:
        params.append("*" + names[rest])
        rest += 1
    elif keyword_only:
        params.append("*")
    params += names[positional : positional + keyword_only]
    if flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[rest])
    namespace: dict = {}
    exec(compile(f"def stub({', '.join(params)}): pass", "<laxify signature>", "exec"), namespace)
    return namespace["stub"].__code__.replace(co_name=code.co_name, co_qualname=code.co_qualname)
