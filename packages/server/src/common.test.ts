import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as common from "./common.js";
import * as node from "./index.js";
import * as edge from "./edge/index.js";

/** Names each entry makes its own way (a Sync over TCP or the embedded server, or over WebSocket). */
const PER_ENTRY = ["createSync", "configureSync", "getDefaultSync", "lazySync"];

describe("entries", () => {
  it("entries - the Node and the edge entry both export every common name, the same value", () => {
    const names = Object.keys(common);
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) {
      expect(node, name).toHaveProperty(name, common[name as keyof typeof common]);
      expect(edge, name).toHaveProperty(name, common[name as keyof typeof common]);
    }
  });

  it("entries - a name both entries export comes from the common list, apart from how a Sync is made", () => {
    const shared = Object.keys(node).filter((name) => name in edge);
    expect(shared.filter((name) => !PER_ENTRY.includes(name)).sort()).toEqual(Object.keys(common).sort());
  });

  it("entries - each entry re-exports common.ts and names none of its names again (one list to add to)", () => {
    const commonText = readFileSync(new URL("./common.ts", import.meta.url), "utf8");
    const listed = (text: string) => new Set([...text.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((m) => m[1]!.split(",").map((n) => n.trim()).filter(Boolean)));
    const commonNames = listed(commonText);
    expect(commonNames.has("Topic") && commonNames.has("createBridge")).toBe(true);
    for (const [file, from] of [["./index.ts", "./common.js"], ["./edge/index.ts", "../common.js"]] as const) {
      const text = readFileSync(new URL(file, import.meta.url), "utf8");
      expect(text, file).toContain(`export * from "${from}";`);
      expect([...listed(text)].filter((name) => commonNames.has(name)), file).toEqual([]);
    }
  });
});
