// Preloaded (`node --import`) into the reference servers the tests run over HTTP.
//
// Those servers call `app.listen(PORT)`, which binds every interface; a test server must listen on
// loopback only. This binds a listen given only a port to 127.0.0.1 instead, and writes the address
// actually bound to stderr once it is listening, so a test can wait for that line (and can ask for
// port 0, a free port chosen by the kernel).
import net from "node:net";

const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
    const port = args[0];
    if (typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port))) {
        const callback = typeof args[args.length - 1] === "function" ? args[args.length - 1] : undefined;
        args = callback ? [{ port: Number(port), host: "127.0.0.1" }, callback] : [{ port: Number(port), host: "127.0.0.1" }];
    }
    this.once("listening", () => {
        const bound = this.address();
        process.stderr.write(`toolvet-real: listening on ${bound.address}:${bound.port}\n`);
    });
    return listen.apply(this, args);
};
