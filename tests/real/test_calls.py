"""Calls through toolvet's ``/mcp`` answer what each real reference server answers directly.

Every call of a reference (tests/real/references.py) is made once straight to the server with the
official Python SDK client, then through toolvet by the Python SDK client in both protocol eras and by
the TypeScript SDK clients 1.x and 2.x (tests/real/js/client.mjs under node); the results must be equal
(canonical: less ``_meta``, ``resultType`` and a false ``isError``; a clock reading blanked).
"""

from __future__ import annotations

import anyio
import pytest

from tests.real.conftest import BOUND, NAMES, World, canonical, sdk_result, typescript_client

pytestmark = pytest.mark.anyio

ERAS = ["2026-07-28", "legacy"]
# What each TypeScript client negotiates with toolvet: 1.x knows only the handshake; 2.x is asked to
# negotiate (js/client.mjs) and takes the stateless era.
TYPESCRIPT_ERAS = {"v1": "2025-11-25", "v2": "2026-07-28"}


async def expected(world: World, name: str) -> list[dict[str, object]]:
    results = await world.direct_results(name)
    # The chosen calls really work on the server itself, so an error through toolvet means something.
    assert not [r for r in results if r.get("isError")], f"{name} answered an error directly: {results}"
    return results


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("name", NAMES)
async def test_python_sdk_calls_through_toolvet_answer_what_the_server_answers(
    world: World, name: str, mode: str
) -> None:
    reference = world.discovered(name)
    direct = await expected(world, name)
    got = []
    with anyio.fail_after(BOUND * len(reference.calls)):
        async with world.toolvet.client(world.toolvet.alice, mode=mode) as client:
            for tool, arguments in reference.calls:
                result = await client.call_tool(f"{name}_{tool}", arguments)
                got.append(reference.normalise(sdk_result(result)))
    assert got == direct


@pytest.mark.parametrize("sdk", sorted(TYPESCRIPT_ERAS))
@pytest.mark.parametrize("name", NAMES)
async def test_typescript_sdk_calls_through_toolvet_answer_what_the_server_answers(
    world: World, name: str, sdk: str
) -> None:
    reference = world.discovered(name)
    direct = await expected(world, name)
    calls = [{"name": f"{name}_{tool}", "arguments": arguments} for tool, arguments in reference.calls]
    answer = await typescript_client(sdk, world.toolvet.mcp, world.toolvet.alice, calls)
    assert answer["protocolVersion"] == TYPESCRIPT_ERAS[sdk]
    # Every stored tool is offered, but one that can only run as a task to a 2026-07-28 client (that
    # era has no tasks; toolvet relays them to handshake-era clients).
    offered = {f"{name}_{tool['name']}" for tool in world.stored(name)
               if sdk == "v1" or (tool.get("execution") or {}).get("taskSupport") != "required"}
    assert offered <= set(answer["tools"]), answer["tools"]
    assert [reference.normalise(canonical(result)) for result in answer["results"]] == direct
