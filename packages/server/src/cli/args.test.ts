import { describe, it, expect } from "vitest";
import { InvalidArgumentError } from "@tidemark/shared";
import { parseCli } from "./args.js";

describe("cli arguments", () => {
  it("args - serve takes flags over the environment over the defaults", () => {
    expect(parseCli(["serve"], {})).toEqual({
      command: "serve",
      args: { port: 8080, hostname: "127.0.0.1", natsUrl: undefined, dataDir: undefined, config: undefined },
    });
    expect(parseCli(["serve", "--port", "0", "--data", "d"], { TIDEMARK_PORT: "9000", TIDEMARK_HOST: "::1", TIDEMARK_NATS_URL: "nats://a" })).toEqual({
      command: "serve",
      args: { port: 0, hostname: "::1", natsUrl: "nats://a", dataDir: "d", config: undefined },
    });
  });

  it("args - --backlog (or TIDEMARK_BACKLOG) sets the listen backlog; unset leaves serveBridge's default", () => {
    expect(parseCli(["serve", "--backlog", "8192"], { TIDEMARK_BACKLOG: "100" })).toMatchObject({ args: { backlog: 8192 } });
    expect(parseCli(["serve"], { TIDEMARK_BACKLOG: "100" })).toMatchObject({ args: { backlog: 100 } });
    expect(parseCli(["serve"], {})).not.toHaveProperty("args.backlog");
    expect(() => parseCli(["serve", "--backlog", "0"], {})).toThrow('--backlog must be a positive integer, got "0"');
    expect(() => parseCli(["serve"], { TIDEMARK_BACKLOG: "lots" })).toThrow('--backlog must be a positive integer, got "lots" (TIDEMARK_BACKLOG)');
  });

  it("args - --uws (or TIDEMARK_UWS) names the uWebSockets.js module; it cannot be combined with a backlog", () => {
    expect(parseCli(["serve", "--uws", "uWebSockets.js"], { TIDEMARK_UWS: "other" })).toMatchObject({ args: { uws: "uWebSockets.js" } });
    expect(parseCli(["serve"], { TIDEMARK_UWS: "/opt/uws/uws.js" })).toMatchObject({ args: { uws: "/opt/uws/uws.js" } });
    expect(parseCli(["serve"], { TIDEMARK_UWS: "" })).not.toHaveProperty("args.uws");
    expect(() => parseCli(["serve", "--uws", "uWebSockets.js", "--backlog", "10"], {})).toThrow("--backlog cannot be set with --uws");
    expect(() => parseCli(["serve", "--uws"], {})).toThrow("option --uws needs a value");
  });

  it("args - --version and --help win over a command", () => {
    expect(parseCli(["--version"], {})).toEqual({ command: "version" });
    expect(parseCli(["serve", "-v"], {})).toEqual({ command: "version" });
    expect(parseCli(["-h"], {})).toEqual({ command: "help" });
  });

  it("args - bad input is an InvalidArgumentError that names the flag in a person's words", () => {
    const message = (argv: string[], env = {}) => {
      try {
        parseCli(argv, env);
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidArgumentError);
        return (err as Error).message;
      }
      throw new Error("no error");
    };
    expect(message(["serve", "--prot", "1"])).toBe("unknown option --prot");
    expect(message(["serve", "--port"])).toBe("option --port needs a value");
    expect(message(["serve", "--port", "80.5"])).toBe('--port must be an integer 0..65535, got "80.5"');
    expect(message(["serve"], { TIDEMARK_PORT: "70000" })).toBe('--port must be an integer 0..65535, got "70000" (TIDEMARK_PORT)');
    expect(message(["serve", "extra"])).toBe('unexpected argument "extra"');
    expect(message([])).toBe("no command given");
    expect(message(["srve"])).toBe('unknown command "srve"');
  });
});
