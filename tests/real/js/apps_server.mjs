// An MCP Apps server written with the official TypeScript SDK 2.x and the MCP Apps server helpers
// (@modelcontextprotocol/ext-apps), run by tests/real over stdio:
//
//   node apps_server.mjs NODE_MODULES [PORT]
//
// NODE_MODULES is the folder scripts/install-real-mcp installed them in. With PORT it serves streamable
// HTTP on 127.0.0.1:PORT at /mcp (the SDK's createMcpHandler, both eras: 2026-07-28 and stateless 2025,
// through @modelcontextprotocol/node's adapter), else stdio. One tool, `show-clock`, whose
// `_meta` names its view (`ui://clock/view.html`, under both the current and the older key, as the
// helpers write it), the view itself as an MCP Apps resource, and the structured result the view shows;
// and `set-alarm`, a 2026-07-28 guard tool that asks the user before it acts.
// One factory serves both protocol eras.
import { packages } from "./packages.mjs";

const exported = packages(process.argv[2]);
const { McpServer, inputRequired, inputResponse } = await import(exported("@modelcontextprotocol/server", "."));
const { serveStdio } = await import(exported("@modelcontextprotocol/server", "./stdio"));
const { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } = await import(
    exported("@modelcontextprotocol/ext-apps", "./server")
);
const z = await import(exported("zod", "./v4"));

const VIEW = "ui://clock/view.html";
const HTML = "<!doctype html><title>Clock</title><p id=time></p><script>/* the view */</script>";

function build() {
    const server = new McpServer({ name: "clock-app", version: "1.0.0" });
    registerAppTool(
        server,
        "show-clock",
        {
            title: "Show a clock",
            description: "Shows a clock for a time zone.",
            inputSchema: z.object({ zone: z.string().describe("An IANA time zone") }),
            _meta: { ui: { resourceUri: VIEW } },
        },
        async ({ zone }) => ({ content: [{ type: "text", text: `clock for ${zone}` }], structuredContent: { zone } }),
    );
    // A 2026-07-28 guard tool (multi-round trip): its first answer asks the user; the retry carries the answer.
    server.registerTool(
        "set-alarm",
        {
            description: "Sets an alarm once the user agrees.",
            inputSchema: z.object({ time: z.string().describe("HH:MM") }),
        },
        async ({ time }, ctx) => {
            const answer = inputResponse(ctx.mcpReq.inputResponses, "agree");
            if (answer.kind !== "elicit") {
                return inputRequired({
                    inputRequests: {
                        agree: inputRequired.elicit({
                            message: `Set an alarm for ${time}?`,
                            requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
                        }),
                    },
                });
            }
            const set = answer.action === "accept" && answer.content?.ok === true;
            return { content: [{ type: "text", text: set ? `alarm set for ${time}` : "no alarm" }] };
        },
    );
    registerAppResource(server, "Clock view", VIEW, { description: "The clock's view." }, async () => ({
        contents: [{ uri: VIEW, mimeType: RESOURCE_MIME_TYPE, text: HTML }],
    }));
    return server;
}

const port = process.argv[3];
if (port === undefined) {
    serveStdio(build);
} else {
    const { createServer } = await import("node:http");
    const { createMcpHandler } = await import(exported("@modelcontextprotocol/server", "."));
    const { toNodeHandler } = await import(exported("@modelcontextprotocol/node", "."));
    const handle = toNodeHandler(createMcpHandler(build));
    createServer((request, response) => {
        if (new URL(request.url, "http://localhost").pathname !== "/mcp") {
            response.writeHead(404).end();
            return;
        }
        handle(request, response);
    }).listen(Number(port), "127.0.0.1");
}
