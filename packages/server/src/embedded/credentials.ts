/**
 * Credentials of an embedded nats-server: a random user and password per data directory, in a
 * file only the owner can read (0600), created on first start and reused after (so a restarted
 * or supervised server accepts the clients that reconnect). Without them any local process
 * could read and write every tenant's events through the loopback listeners.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";

export interface NatsCredentials {
  user: string;
  pass: string;
}

/** File name inside the nats directory of the data directory. */
export const CREDENTIALS_FILE = "credentials.json";

function valid(c: unknown): c is NatsCredentials {
  const o = c as NatsCredentials | null;
  return typeof o?.user === "string" && typeof o.pass === "string" && o.user.length > 0 && o.pass.length >= 16;
}

/** Reads `${dir}/credentials.json`, or creates it (mode 0600) when absent or unreadable. */
export function loadOrCreateCredentials(dir: string): NatsCredentials {
  const path = `${dir}/${CREDENTIALS_FILE}`;
  try {
    const existing: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (valid(existing)) {
      chmodSync(path, 0o600); // tightened if someone loosened it
      return existing;
    }
  } catch {
    // absent or damaged: make new ones
  }
  const created = { user: "tidemark", pass: randomBytes(24).toString("base64url") };
  writeFileSync(path, JSON.stringify(created) + "\n", { mode: 0o600 });
  chmodSync(path, 0o600); // writeFileSync keeps the mode of an existing file
  return created;
}
