"""The official MCP registry's ``server.json`` read into toolvet's server fields.

A document is checked against the registry's published JSON Schema (vendored in ``data/``) first.
Then its first remote (a streamable-http or SSE endpoint) is taken, else its first package that runs
over stdio, launched the way the registry's clients launch it: ``npx -y ID@VERSION`` (npm),
``uvx ID==VERSION`` (pypi), ``docker run -i --rm IMAGE`` (oci), ``dnx ID@VERSION --yes`` (nuget).

Inputs (headers, environment variables, arguments) take their ``value`` (its ``{variables}`` filled
from the input's ``variables``, else from the environment toolvet runs in), else their ``default``,
else the environment variable of the input's name (an env var's ``name``, a header's name in upper
case with ``-`` as ``_``, a positional argument's ``valueHint``); a required one with none leaves the
entry out, naming it. Also read: the registry API's ``{"server": ...}`` and ``{"servers": [...]}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, Final

from jsonschema import Draft7Validator
from jsonschema.exceptions import best_match

from toolvet.services.client_configs import Entry

REGISTRY_SCHEMA_VERSION: Final = "2025-09-29"
_VARIABLE = re.compile(r"\{([A-Za-z0-9_.-]+)\}")


@cache
def _validator() -> Draft7Validator:
    text = (resources.files("toolvet") / "services" / "data" / "registry-server.schema.json").read_text("utf-8")
    return Draft7Validator(json.loads(text))


def registry_documents(document: Any) -> list[dict[str, Any]] | None:
    """The ``server.json`` documents in ``document`` (one, or the registry API's wrappings), or None
    when it is not the registry's."""
    if isinstance(document, dict) and isinstance(document.get("servers"), list):
        found = [d.get("server", d) if isinstance(d, dict) else d for d in document["servers"]]
        return found if all(isinstance(d, dict) and _looks_registry(d) for d in found) else None
    if isinstance(document, dict) and isinstance(document.get("server"), dict):
        document = document["server"]
    return [document] if isinstance(document, dict) and _looks_registry(document) else None


def _looks_registry(document: dict[str, Any]) -> bool:
    schema = document.get("$schema")
    if isinstance(schema, str) and schema.endswith("server.schema.json"):
        return True
    return isinstance(document.get("name"), str) and "/" in document["name"] and (
        "packages" in document or "remotes" in document)


def schema_problem(document: dict[str, Any]) -> str | None:
    """Why ``document`` does not match the registry's schema, or None when it does."""
    error = best_match(_validator().iter_errors(document))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the document"
    return f"does not match the registry's server.json schema ({REGISTRY_SCHEMA_VERSION}) at {where}: {error.message}"


def registry_entry(document: dict[str, Any], environ: Mapping[str, str]) -> Entry:
    """One ``server.json`` as an entry named after the part of its name after the '/'."""
    name = str(document.get("name", "server"))
    entry = Entry(source=name, fields={})
    if (problem := schema_problem(document)) is not None:
        entry.problem = problem
        return entry
    short = name.rpartition("/")[2]
    entry.source = short
    entry.fields["title"] = document.get("title") or short
    if len(document.get("remotes") or []) + len(document.get("packages") or []) > 1:
        entry.notes.append("the file offers several ways to run it: the first remote, else the first stdio "
                           "package, is taken")
    try:
        remote = next(iter(document.get("remotes") or []), None)
        if remote is not None:
            entry.fields |= _remote(remote, environ)
            return entry
        package = next((p for p in document.get("packages") or [] if p["transport"]["type"] == "stdio"), None)
        if package is None:
            entry.problem = "it has no remote and no package that runs over stdio"
            return entry
        entry.fields |= _package(package, environ)
    except _Missing as exc:
        entry.problem = f"{exc}; set it and import again"
    except _Unsupported as exc:
        entry.problem = str(exc)
    return entry


class _Missing(Exception):
    """An input without a value."""


class _Unsupported(Exception):
    """A way of running a server toolvet does not take."""


def _fill(text: str, variables: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        variable = variables.get(key)
        if isinstance(variable, dict):
            for source in ("value", "default"):
                if isinstance(variable.get(source), str):
                    return str(variable[source])
        if key in environ:
            return environ[key]
        if isinstance(variable, dict) and variable.get("isRequired"):
            raise _Missing(f"{{{key}}} needs a value: the environment variable {key} is not set")
        return match.group(0)

    return _VARIABLE.sub(one, text)


def _input(raw: Mapping[str, Any], env_name: str | None, environ: Mapping[str, str], what: str) -> str | None:
    """An input's value, or None for an optional one without any."""
    variables = raw.get("variables") or {}
    if isinstance(raw.get("value"), str):
        return _fill(raw["value"], variables, environ)
    if isinstance(raw.get("default"), str):
        return _fill(raw["default"], variables, environ)
    if env_name and env_name in environ:
        return environ[env_name]
    if raw.get("isRequired"):
        hint = f" (the environment variable {env_name} is not set)" if env_name else ""
        raise _Missing(f"{what} needs a value{hint}")
    return None


def _remote(remote: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    headers: dict[str, str] = {}
    for header in remote.get("headers") or []:
        value = _input(header, header["name"].upper().replace("-", "_"), environ, f"header {header['name']}")
        if value is not None:
            headers[header["name"]] = value
    url = _fill(remote["url"], {}, environ)
    if _VARIABLE.search(url):
        raise _Missing(f"the url {url!r} has a variable without a value")
    return {"transport": remote["type"], "url": url, "headers": headers}


def _arguments(raw: list[Mapping[str, Any]], environ: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for argument in raw:
        if argument.get("type") == "named":
            value = _input(argument, None, environ, f"argument {argument['name']}")
            out.extend([argument["name"]] if value is None else [argument["name"], value])
        else:
            hint = argument.get("valueHint")
            value = _input(argument, hint, environ, f"argument {hint or 'positional'}")
            if value is not None:
                out.append(value)
    return out


def _package(package: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    kind, ident, version = package["registryType"], package["identifier"], package.get("version")
    env: dict[str, str] = {}
    for variable in package.get("environmentVariables") or []:
        value = _input(variable, variable["name"], environ, f"environment variable {variable['name']}")
        if value is not None:
            env[variable["name"]] = value
    runtime = _arguments(list(package.get("runtimeArguments") or []), environ)
    arguments = _arguments(list(package.get("packageArguments") or []), environ)
    if kind == "npm":
        command, args = "npx", [*(runtime or ["-y"]), f"{ident}@{version}" if version else ident, *arguments]
    elif kind == "pypi":
        command, args = "uvx", [*runtime, f"{ident}=={version}" if version else ident, *arguments]
    elif kind == "oci":
        passed = [flag for name in env for flag in ("-e", name)]
        command, args = "docker", ["run", "-i", "--rm", *passed, *runtime, ident, *arguments]
    elif kind == "nuget":
        command, args = "dnx", [*runtime, f"{ident}@{version}" if version else ident, "--yes", *arguments]
    else:
        raise _Unsupported(f"a {kind} package is downloaded and unpacked before it runs, which toolvet does not do: "
                       "unpack it and register its command by hand")
    return {"transport": "stdio", "command": package.get("runtimeHint") or command, "args": args, "env": env}
