"""Reading what a callable needs from its signature, once, at compile time."""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

EMPTY: Final[Any] = inspect.Parameter.empty
"""No annotation, or no default: ``inspect.Parameter.empty`` (``Param.key``, ``Param.default``)."""
NONE_TYPE: Final = type(None)


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a callable, with its annotation normalized to a lookup key.

    ``key`` is the annotation with ``Annotated`` metadata stripped and ``None``
    removed from an optional union; ``optional`` records that ``None`` was
    allowed. ``metadata`` keeps the ``Annotated`` extras for callers that read
    markers.
    """

    name: str
    key: Any
    default: Any
    kind: inspect._ParameterKind
    optional: bool = False
    metadata: tuple[Any, ...] = ()
    annotation: Any = EMPTY

    @property
    def has_default(self) -> bool:
        return self.default is not EMPTY

    @property
    def variadic(self) -> bool:
        return self.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

    @property
    def label(self) -> str:
        """The parameter as written in a signature: ``name``, ``*name`` or ``**name``."""
        if self.kind is inspect.Parameter.VAR_POSITIONAL:
            return f"*{self.name}"
        if self.kind is inspect.Parameter.VAR_KEYWORD:
            return f"**{self.name}"
        return self.name


class AnnotationError(TypeError):
    """An annotation could not be evaluated (a name that is not importable)."""


def normalize(annotation: Any) -> tuple[Any, bool, tuple[Any, ...]]:
    """Return ``(key, optional, metadata)`` for an annotation.

    >>> normalize(typing.Optional[int])
    (<class 'int'>, True, ())
    >>> normalize(typing.Annotated[str, "marker"])
    (<class 'str'>, False, ('marker',))
    """
    metadata: tuple[Any, ...] = ()
    if typing.get_origin(annotation) is typing.Annotated:
        metadata = tuple(annotation.__metadata__)
        annotation = annotation.__origin__
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not NONE_TYPE]
        if len(args) != len(typing.get_args(annotation)) and len(args) == 1:
            inner, _, inner_meta = normalize(args[0])
            return inner, True, metadata + inner_meta
    return annotation, False, metadata


def annotated_callable(fn: Any) -> Any:
    """The object whose annotations describe what calling ``fn`` takes and returns.

    ``functools.partial`` layers and decorators (``__wrapped__``) are looked
    through; a class is read as itself (its own annotations: say its
    ``__init__`` for what constructing it takes); a callable instance is read
    through ``type(fn).__call__``.
    """
    while True:
        while isinstance(fn, functools.partial):
            fn = fn.func
        unwrapped = inspect.unwrap(fn)
        if unwrapped is fn:
            break
        fn = unwrapped
    if inspect.isroutine(fn) or isinstance(fn, type) or not callable(fn):
        return fn
    return type(fn).__call__


def type_hints(fn: Any, *, strict: bool = True) -> dict[str, Any]:
    """The evaluated annotations of callable ``fn``, ``Annotated`` extras kept.

    String annotations (``from __future__ import annotations``) are evaluated
    in ``fn``'s module. When one cannot be (a name that is not importable, a
    string that is not an expression), ``strict`` raises ``AnnotationError``
    naming ``fn``; with ``strict=False`` the answer is ``{}``. An object that
    carries no readable annotations (a builtin) has none: ``{}``.

    >>> def greet(name: "str", times: int = 1) -> str: ...
    >>> type_hints(greet)
    {'name': <class 'str'>, 'times': <class 'int'>, 'return': <class 'str'>}
    """
    target = annotated_callable(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except (NameError, AttributeError, SyntaxError) as exc:
        if not strict:
            return {}
        name = getattr(fn, "__qualname__", None) or repr(fn)
        raise AnnotationError(
            f"cannot evaluate the annotations of {name}: {exc}; "
            "define the annotated types at module level or import them"
        ) from exc
    except TypeError:
        if not strict:
            return {}
        # not a function, class or module: its raw annotations, if it has any
        return dict(getattr(target, "__annotations__", None) or {})


def return_annotation(fn: Any) -> Any:
    """What ``fn`` is annotated to return (evaluated, ``Annotated`` kept); ``None`` when
    unannotated or unreadable. An annotation of ``None`` reads as ``type(None)``.

    Only a string annotation is evaluated, so another parameter's unimportable
    annotation does not hide a return annotation that is a real object.

    >>> def count() -> "int": ...
    >>> return_annotation(count)
    <class 'int'>
    >>> return_annotation(lambda: 0) is None
    True
    """
    target = annotated_callable(fn)
    try:
        annotations = inspect.get_annotations(target)
    except TypeError:  # nothing that carries annotations
        return None
    if "return" not in annotations:
        return None
    returns = annotations["return"]
    if isinstance(returns, str):
        return type_hints(target, strict=False).get("return")
    return NONE_TYPE if returns is None else returns


def _no_init(init: Any) -> bool:
    """``object.__init__``, or the placeholder ``typing.Protocol`` installs on subclasses."""
    return init is object.__init__ or getattr(init, "__name__", "") == "_no_init_or_replace_init"


def init_of(target: Any) -> Callable[..., Any] | None:
    """The callable whose parameters a class needs, or ``None`` for ``object.__init__``.

    A class that explicitly subclasses a ``Protocol`` inherits a placeholder
    ``__init__(self, *args, **kwargs)``; that counts as no ``__init__`` at all.
    """
    init = target.__init__
    if _no_init(init):
        new = target.__new__
        return None if new is object.__new__ else new
    return typing.cast(Callable[..., Any], init)


def parameters(fn: Callable[..., Any], *, skip_self: bool = False) -> list[Param]:
    """Every parameter of ``fn`` with its normalized annotation.

    Classes are read through their ``__init__``; ``self`` is skipped for them
    and, with ``skip_self``, for unbound methods.
    """
    if isinstance(fn, type):
        init = init_of(fn)
        if init is None:
            return []
        target: Callable[..., Any] = init
        skip_self = True
    else:
        target = fn
    signature = inspect.signature(target, follow_wrapped=True)
    hints = type_hints(target)
    result: list[Param] = []
    for index, param in enumerate(signature.parameters.values()):
        if skip_self and index == 0 and param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        annotation = hints.get(param.name, EMPTY)
        if annotation is EMPTY:
            key, optional, metadata = EMPTY, False, ()
        else:
            key, optional, metadata = normalize(annotation)
        result.append(
            Param(
                name=param.name,
                key=key,
                default=param.default,
                kind=param.kind,
                optional=optional,
                metadata=metadata,
                annotation=annotation,
            )
        )
    return result


def type_name(key: Any) -> str:
    """A short readable name for a type or callable, for paths and messages.

    >>> def make():
    ...     class Local: ...
    ...     return Local
    >>> type_name(make())
    'Local'
    """
    name = getattr(key, "__qualname__", None)
    if isinstance(name, str) and (isinstance(key, type) or not typing.get_origin(key)):
        return name.rpartition("<locals>.")[2]
    return repr(key).replace("typing.", "")
