// An MCP Apps server written with the official TypeScript SDK 2.x and the MCP Apps server helpers
// (@modelcontextprotocol/ext-apps), run by tests/real over stdio:
//
//   node apps_server.mjs NODE_MODULES
//
// NODE_MODULES is the folder scripts/install-real-mcp installed them in. One tool, `show-clock`, whose
// `_meta` names its view (`ui://clock/view.html`, under both the current and the older key, as the
// helpers write it), the view itself as an MCP Apps resource, and the structured result the view shows.
// The SDK's serveStdio serves both protocol eras from one factory.
import { packages } from "./packages.mjs";

const exported = packages(process.argv[2]);
const { McpServer } = await import(exported("@modelcontextprotocol/server", "."));
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
    registerAppResource(server, "Clock view", VIEW, { description: "The clock's view." }, async () => ({
        contents: [{ uri: VIEW, mimeType: RESOURCE_MIME_TYPE, text: HTML }],
    }));
    return server;
}

serveStdio(build);
