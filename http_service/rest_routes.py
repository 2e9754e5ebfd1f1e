"""The HTTP+JSON routes, read from the proto: each rpc's `google.api.http` annotation (its verb,
path template and body) and its additional binding, the same path under `/{tenant}`
(wire-facts.md section 2). Nothing here is written by hand a second time; a proto whose
annotations use a form this module does not know stops the import.

A request is mapped onto the rpc's request message as HTTP transcoding does it: a path variable
(`{id=*}`, one segment) sets its field; with `body: "*"` the JSON body carries every other field;
without a body, every other field is a query parameter named by its JSON name (spec 11.5).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

from google.api import annotations_pb2
from google.protobuf.descriptor import FieldDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import OPERATIONS, Operation

__all__ = ["ROUTES", "RestRoute", "bind_path", "find_route", "query_json", "routes_of"]

# One path variable: `{field}` or `{field=*}` (one segment); `**` and nested patterns are
# forms the A2A proto does not use, and are refused rather than guessed at.
_VARIABLE = re.compile(r"\{([a-z_][a-z0-9_]*)(?:=\*)?\}")
_LITERAL = re.compile(r"[A-Za-z0-9_.~:/-]*")


@dataclasses.dataclass(frozen=True)
class RestRoute:
    verb: str  # GET, POST or DELETE
    template: str  # as the proto writes it: "/tasks/{id=*}:cancel"
    operation: Operation
    body: bool  # body "*": the JSON body holds every field the path does not bind
    pattern: re.Pattern[str]
    additional: bool  # the tenant form, from additional_bindings

    def match(self, path: str) -> dict[str, str] | None:
        found = self.pattern.fullmatch(path)
        return None if found is None else found.groupdict()


def _compile(template: str) -> re.Pattern[str]:
    parts, position = [], 0
    for variable in _VARIABLE.finditer(template):
        parts.append(_literal(template[position:variable.start()], template))
        # Lazy: in `/tasks/{id}:cancel` the id stops before the verb.
        parts.append(f"(?P<{variable.group(1)}>[^/]+?)")
        position = variable.end()
    parts.append(_literal(template[position:], template))
    return re.compile("".join(parts))


def _literal(text: str, template: str) -> str:
    if not _LITERAL.fullmatch(text):
        raise RuntimeError(f"unsupported HTTP path template in proto/a2a.proto: {template!r}")
    return re.escape(text)


def _rule_route(name: str, rule: Any, additional: bool) -> RestRoute:
    kind = rule.WhichOneof("pattern")
    if kind not in ("get", "post", "delete", "put", "patch") or rule.body not in ("", "*"):
        raise RuntimeError(f"unsupported google.api.http rule on {name}: {rule}")
    template = getattr(rule, kind)
    return RestRoute(kind.upper(), template, OPERATIONS[name], rule.body == "*",
                     _compile(template), additional)


def routes_of(service: ServiceDescriptor) -> tuple[RestRoute, ...]:
    """Every binding of every rpc of `service`, in the order a path is tried: the rpc's own
    binding before the tenant form (`/tasks/tasks` is a task, not the tenant `tasks`), and among
    them the longer literal first (`/tasks/{id}:subscribe` before `/tasks/{id}`)."""
    routes = []
    for method in service.methods:
        rule = method.GetOptions().Extensions[annotations_pb2.http]
        if not rule.WhichOneof("pattern"):
            raise RuntimeError(f"{method.full_name} has no google.api.http annotation")
        routes.append(_rule_route(method.name, rule, False))
        routes.extend(_rule_route(method.name, extra, True) for extra in rule.additional_bindings)
    return tuple(sorted(routes, key=lambda r: (r.additional, -len(_VARIABLE.sub("", r.template)))))


def _subscribe_by_post(routes: Iterable[RestRoute]) -> tuple[RestRoute, ...]:
    """SubscribeToTask by POST too: the spec's method table (5.3, 11.3) and the reference SDK's
    client use POST where the proto says GET (wire-facts.md section 2). No body is read."""
    return tuple(dataclasses.replace(route, verb="POST") for route in routes
                 if route.operation.name == "SubscribeToTask")


_ANNOTATED = routes_of(pb.DESCRIPTOR.services_by_name["A2AService"])
ROUTES: tuple[RestRoute, ...] = _ANNOTATED + _subscribe_by_post(_ANNOTATED)


def find_route(verb: str, path: str, routes: Sequence[RestRoute] = ROUTES
               ) -> tuple[RestRoute | None, dict[str, str], list[str]]:
    """The route for `verb` and `path` (relative to the base path) and its path variables; with
    no route, the verbs the path takes (none: the path is unknown)."""
    allowed: list[str] = []
    for route in routes:
        variables = route.match(path)
        if variables is None:
            continue
        if route.verb == verb:
            return route, variables, []
        if route.verb not in allowed:
            allowed.append(route.verb)
    return None, {}, allowed


def bind_path(message: Message, variables: dict[str, str]) -> None:
    """Set the fields the path binds; they win over the same field in the body or query."""
    for field, value in variables.items():
        try:
            setattr(message, field, value)
        except (TypeError, ValueError) as exc:  # text no UTF-8 encoder takes
            raise InvalidParamsError(f"Invalid parameters: {field} is not text",
                                     violations=[(field, "is not valid text")]) from exc


_QUERY_FIELDS: dict[Any, dict[str, Any]] = {}


def query_json(request: type[Message], pairs: Iterable[tuple[str, str]],
               bound: Iterable[str]) -> dict[str, Any]:
    """The query parameters of a request without a body, as the ProtoJSON object of `request`
    (parsed and checked by a2akit.protojson like any body). Names are the fields' JSON names
    (the proto names are accepted too); others, `A2A-Version` among them, are ignored like
    unknown JSON members. Booleans are `true`/`false`; repeated fields take repeated keys or
    commas; a singular field given twice is refused rather than one value picked."""
    fields = _QUERY_FIELDS.get(request.DESCRIPTOR)
    if fields is None:
        fields = _QUERY_FIELDS[request.DESCRIPTOR] = {
            name: field for field in request.DESCRIPTOR.fields
            for name in (field.json_name, field.name)}
    skip = set(bound)
    out: dict[str, Any] = {}
    for key, value in pairs:
        field = fields.get(key)
        if field is None or field.name in skip:
            continue
        if field.is_repeated:
            out.setdefault(field.json_name, []).extend(v for v in value.split(",") if v)
        elif field.json_name in out:
            raise InvalidParamsError(f"Invalid parameters: {key} is given more than once",
                                     violations=[(field.name, "is given more than once")])
        elif field.type == FieldDescriptor.TYPE_BOOL and value in ("true", "false"):
            out[field.json_name] = value == "true"
        else:
            out[field.json_name] = value  # a2akit.protojson checks it against the field's type
    return out
