import { describe, expect, it } from "vitest";
import { featuresOf, parseVersion, versionAtLeast } from "./features.js";

describe("server features", () => {
  it("features - versions parse with or without v, pre-release tags and missing parts", () => {
    expect(parseVersion("2.9.10")).toEqual([2, 9, 10]);
    expect(parseVersion("v2.11.0-RC.1")).toEqual([2, 11, 0]);
    expect(parseVersion("2.10")).toEqual([2, 10, 0]);
    expect(parseVersion("garbage")).toEqual([0, 0, 0]);
  });

  it("features - comparison is numeric per part, not by string", () => {
    expect(versionAtLeast("2.10.0", 2, 9)).toBe(true);
    expect(versionAtLeast("2.9.10", 2, 10)).toBe(false);
    expect(versionAtLeast("2.10.23", 2, 10, 23)).toBe(true);
    expect(versionAtLeast("2.10.22", 2, 10, 23)).toBe(false);
    expect(versionAtLeast("3.0.0", 2, 15)).toBe(true);
  });

  it("features - 2.9 has none of the newer features, 2.10 most, 2.11 batched direct get too", () => {
    expect(featuresOf("2.9.10")).toMatchObject({ metadata: false, syncAlways: false, multiFilter: false, batchDirectGet: false });
    expect(featuresOf("2.10.29")).toMatchObject({ metadata: true, syncAlways: true, multiFilter: true, batchDirectGet: false });
    expect(featuresOf("2.15.1")).toMatchObject({ metadata: true, syncAlways: true, multiFilter: true, batchDirectGet: true });
  });
});
