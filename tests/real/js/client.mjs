// An MCP client built with the official TypeScript SDK, run by tests/real as a subprocess.
//
//   node client.mjs SDK NODE_MODULES REQUEST_JSON
//
// SDK is "v1" (@modelcontextprotocol/sdk 1.x) or "v2" (@modelcontextprotocol/client 2.x); NODE_MODULES
// is the folder scripts/install-real-mcp installed them in; REQUEST_JSON is
//   {"url": ..., "token": ..., "calls": [{"name": ..., "arguments": {...}}, ...]}.
// It connects over streamable HTTP with `Authorization: Bearer <token>`, lists the tools (every page),
// calls each named tool in turn and prints one JSON object on stdout:
//   {"protocolVersion": ..., "tools": [names...], "results": [CallToolResult...], "updated": [uris...]}.
// The request may also hold "roots" (declared, and listed to a server that asks) and, with the 1.x
// SDK, "subscribe" (a resource URI subscribed to before the calls) and "waitFor" (a resource URI whose
// notifications/resources/updated it waits for, up to 10 s, after the calls).
// A failure prints its message on stderr and exits 1; the test bounds the whole run as well.
import { packages } from "./packages.mjs";

const [sdk, nodeModules, requestJson] = process.argv.slice(2);
const request = JSON.parse(requestJson);
const exported = packages(nodeModules);

async function load() {
    if (sdk === "v1") {
        const { Client } = await import(exported("@modelcontextprotocol/sdk", "./client"));
        const { StreamableHTTPClientTransport } = await import(
            exported("@modelcontextprotocol/sdk", "./client/streamableHttp.js")
        );
        const types = await import(exported("@modelcontextprotocol/sdk", "./types.js"));
        return { Client, StreamableHTTPClientTransport, types };
    }
    if (sdk === "v2") {
        return await import(exported("@modelcontextprotocol/client", "."));
    }
    throw new Error(`unknown SDK ${sdk} (v1 or v2)`);
}

const { Client, StreamableHTTPClientTransport, types } = await load();
const transport = new StreamableHTTPClientTransport(new URL(request.url), {
    requestInit: { headers: { Authorization: `Bearer ${request.token}` } },
});
// 1.x speaks only the handshake era; 2.x is told to negotiate (`server/discover` first, then the
// handshake as a fallback), so the two clients cover both eras of toolvet's endpoint.
const options = sdk === "v2" ? { versionNegotiation: { mode: "auto" } } : {};
if (request.roots) options.capabilities = { roots: { listChanged: true } };
const client = new Client({ name: `toolvet-tests-${sdk}`, version: "1.0.0" }, options);
const updated = [];
let heard = () => {};
if (request.roots) {
    // 2.x names the method; 1.x takes its schema.
    const method = sdk === "v2" ? "roots/list" : types.ListRootsRequestSchema;
    client.setRequestHandler(method, () => ({ roots: request.roots }));
}
if (request.subscribe || request.waitFor) {
    client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, (note) => {
        updated.push(note.params.uri);
        heard();
    });
}
try {
    await client.connect(transport);
    if (request.subscribe) await client.subscribeResource({ uri: request.subscribe });
    const tools = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
        const listed = await client.listTools(cursor === undefined ? undefined : { cursor });
        tools.push(...listed.tools.map((tool) => tool.name));
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
    }
    const results = [];
    for (const call of request.calls) {
        results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
    }
    if (request.waitFor && !updated.includes(request.waitFor)) {
        await new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no update of ${request.waitFor} within 10 s`)), 10000);
            heard = () => {
                if (updated.includes(request.waitFor)) {
                    clearTimeout(timer);
                    resolve();
                }
            };
        });
    }
    const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
    process.stdout.write(JSON.stringify({ protocolVersion, tools, results, updated }) + "\n");
} catch (error) {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exitCode = 1;
} finally {
    await client.close();
}
