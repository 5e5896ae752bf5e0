// Where tests/real's node scripts find the npm packages scripts/install-real-mcp installed.
//
// ES modules ignore NODE_PATH, and the install folder is not an ancestor of these scripts, so the packages
// are imported by file URL, found the way node would find them: through the package's "exports" map
// (exact entries, then "./*" patterns).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// A function giving the file URL a package of `nodeModules` exports for `subpath` to `import`.
export function packages(nodeModules) {
    return function exported(pkg, subpath) {
        const dir = join(nodeModules, pkg);
        const exports = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).exports;
        let target = exports[subpath];
        let star = "";
        if (target === undefined) {
            const pattern = Object.keys(exports).find(
                (key) => key.endsWith("*") && subpath.startsWith(key.slice(0, -1)),
            );
            if (pattern === undefined) throw new Error(`${pkg} exports no ${subpath}`);
            star = subpath.slice(pattern.length - 1);
            target = exports[pattern];
        }
        target = target.import ?? target;
        target = typeof target === "string" ? target : target.default;
        return pathToFileURL(join(dir, target.replace("*", star))).href;
    };
}
