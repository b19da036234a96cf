import { describe, it, expect } from "vitest";
import { inspect } from "node:util";
import { countRequests } from "@tidemark/testing";
import { headerOf, lazyRequest, urlOf } from "./lazy-request.js";

const head = { target: "/ws?room=7", headers: { host: "127.0.0.1:8080", "x-a": ["1", "2"], cookie: "a=b" } };

describe("lazyRequest", () => {
  it("reads like the Request of the head: URL, joined headers, GET, usable by Request and clone", () => {
    const request = lazyRequest(head);
    expect(request instanceof Request).toBe(true);
    expect(request.url).toBe("http://127.0.0.1:8080/ws?room=7");
    expect(request.method).toBe("GET");
    expect(request.headers.get("x-a")).toBe("1, 2");
    expect(new Request(request).headers.get("cookie")).toBe("a=b");
    expect(request.clone().url).toBe(request.url);
    expect(inspect(request)).toContain("http://127.0.0.1:8080/ws?room=7");
  });

  it("headerOf and urlOf answer from the head without building a Request", () => {
    using requests = countRequests();
    const request = lazyRequest(head);
    // a lazy request answers instanceof the Request class that was global when it was made
    expect(request instanceof globalThis.Request).toBe(true);
    expect([headerOf(request, "x-a"), headerOf(request, "origin"), urlOf(request)]).toEqual(["1, 2", null, "http://127.0.0.1:8080/ws?room=7"]);
    expect(requests.built).toBe(0);
    expect(request.headers.get("host")).toBe("127.0.0.1:8080");
    expect(request.url).toBe("http://127.0.0.1:8080/ws?room=7");
    expect(requests.built).toBe(1);
  });
});
