/**
 * The demo notification centre: one feed per tenant through @tidemark/client, a bell with the
 * unread count, the connection status, and the server's own count of connections.
 */
import { createClient, type Feed } from "@tidemark/client";
import { Chime } from "./chime.js";
import { NotificationList, type Note } from "./list.js";
import "./style.css";

const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;
const list = $<HTMLOListElement>("#list");
const empty = $("#empty");
const statusEl = $('[data-testid="connection-status"]');
const unreadEl = $('[data-testid="unread-count"]');
const tabCountEl = $('[data-testid="tab-count"]');
const refusedEl = $('[data-testid="refused"]');
const effectEl = $('[data-testid="effect-count"]');
const liveEl = $('[data-testid="live-last"]');
const tenantSelect = $<HTMLSelectElement>("#tenant");
const userSelect = $<HTMLSelectElement>("#user");
const input = $<HTMLInputElement>("#text");

const params = new URLSearchParams(location.search);
// Who is signed in: the demo_user cookie the server set at sign-in (default ada).
const user = decodeURIComponent(/(?:^|;\s*)demo_user=([^;]+)/.exec(document.cookie)?.[1] ?? "ada");
userSelect.value = user;
let tenant = params.get("tenant") ?? localStorage.getItem("tidemark-demo:tenant") ?? "acme";
tenantSelect.value = tenant;

const client = createClient({
  url: "/ws",
  getToken: async () => {
    // The header tells the server this is the demo's own page (another site's page cannot send it).
    const res = await fetch("/api/token", { headers: { "x-tidemark-demo": "1" } });
    if (!res.ok) throw new Error(`token: HTTP ${res.status}`);
    return ((await res.json()) as { token: string }).token;
  },
  reconnect: { baseMs: 250, maxMs: 3_000 },
  // ?transport=direct|leader forces a fallback (benchmark baseline, debugging).
  transport: (params.get("transport") ?? "auto") as "auto" | "shared-worker" | "leader" | "direct",
  historyLimit: 500,
  // The client keeps history per user; the hint also tells it at once when the user changed.
  principal: user,
  // Tests shorten how long a silent (crashed) tab keeps its place.
  ...(params.has("tabTimeoutMs") ? { tabTimeoutMs: Number(params.get("tabTimeoutMs")), heartbeatMs: 500 } : {}),
});

// ---- connection status and "N tabs share 1 connection" ----

let serverConnections: number | undefined;
function renderShare(): void {
  const tabs = client.state.tabs;
  const conns = serverConnections === undefined ? "?" : String(serverConnections);
  tabCountEl.textContent = `${tabs} ${tabs === 1 ? "tab shares" : "tabs share"} ${conns} ${serverConnections === 1 ? "connection" : "connections"}`;
  tabCountEl.dataset.tabs = String(tabs);
  tabCountEl.dataset.connections = conns;
}
client.onState((state) => {
  statusEl.textContent = state.status;
  statusEl.dataset.status = state.status;
  // `failed`: the bridge refused the connection for good (ORIGIN_REFUSED, UNAUTHORIZED).
  statusEl.title = state.error ? `${state.error.code}: ${state.error.message}` : "";
  $('[data-testid="transport"]').textContent = state.transport;
  renderShare();
});
async function pollServer(): Promise<void> {
  try {
    const res = await fetch("/api/stats", { cache: "no-store" });
    serverConnections = ((await res.json()) as { connections: number }).connections;
  } catch {
    serverConnections = undefined;
  }
  renderShare();
}
setInterval(() => void pollServer(), 1_000);
void pollServer();

// ---- the feed ----

let feed: Feed<Note> | undefined;
let ticker: Feed<Note> | undefined;
let unsubscribers: (() => void)[] = [];
let effects = 0;
// The sound of new events: its beeps and audio state are data-beeps / data-audio of the effect count.
const chime = new Chime({ element: effectEl });

const rows = new NotificationList({
  list,
  keep: () => feed?.items.length ?? 0,
  // The user's read cursor, kept by the server and the same in every tab and device.
  isRead: (item) => feed?.isRead(item) ?? false,
  rendered: () => {
    empty.hidden = list.childElementCount > 0;
    renderUnread();
  },
});

let unread = 0;
/**
 * The bell counts the unread rows the list shows (not the feed's items, some of which may wait
 * for the next render): badge and list agree after every render. `restyle` re-marks every row
 * first (the read state changed).
 */
function renderUnread(restyle = false): void {
  if (!feed) return;
  if (restyle) rows.restyle();
  unread = rows.unreadCount();
  unreadEl.textContent = String(unread);
  unreadEl.dataset.zero = String(unread === 0);
  document.title = unread > 0 ? `(${unread}) Tidemark` : "Tidemark notification centre";
}

function openFeed(): void {
  for (const u of unsubscribers) u();
  feed?.close();
  ticker?.close();
  liveEl.textContent = "—";
  liveEl.dataset.count = "0";
  rows.clear();
  refusedEl.hidden = true;
  empty.hidden = false;
  // A first visit (nothing saved for this user and tenant) opens with the last 50 notifications.
  const current = client.feed<Note>({ topic: "demo.notifications", tenantId: tenant, initial: { last: 50 } });
  feed = current;
  // The same events as a live subscription: new ones only, nothing kept.
  const live = client.live<Note>({ topic: "demo.notifications", tenantId: tenant });
  ticker = live;
  let liveCount = 0;
  unsubscribers = [
    live.onItems((items, { replaced }) => {
      if (replaced) {
        liveCount = 0;
        liveEl.textContent = "—";
      }
      const last = items.filter((i) => i.kind === "event").at(-1);
      liveCount += items.length;
      liveEl.dataset.count = String(liveCount);
      if (last?.kind === "event") liveEl.textContent = last.event.data.text;
    }),
    current.onItems((items, { replaced }) => {
      // Another user signed in, or the server refused the feed: nothing shown before stays.
      if (replaced) {
        rows.clear();
        empty.hidden = current.items.length > 0;
        renderUnread();
      }
      // The rows, the unread count and the title change together, at most every 100 ms.
      rows.add(items);
    }),
    // Another tab or device of the user read something (or this one did).
    current.onUnread(() => renderUnread(true)),
    current.onEffect(() => {
      effects++;
      effectEl.textContent = String(effects);
      chime.beep();
    }),
    current.onError((error) => {
      refusedEl.hidden = false;
      // A connection refusal reaches every feed too; it is not about the tenant.
      const what = error.code === "ORIGIN_REFUSED" || error.code === "UNAUTHORIZED" ? "the connection" : `tenant “${tenant}”`;
      refusedEl.textContent = `The server refused ${what}: ${error.code} — ${error.message}`;
      refusedEl.dataset.code = error.code;
    }),
  ];
}

// Sign out and in as another user of this browser profile.
userSelect.addEventListener("change", () => {
  void fetch("/api/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: userSelect.value }),
  }).then(() => location.reload());
});

tenantSelect.addEventListener("change", () => {
  tenant = tenantSelect.value;
  localStorage.setItem("tidemark-demo:tenant", tenant);
  openFeed();
});

// "Mark all read": up to the newest row the user was shown, never further (an event that arrives
// during the click stays unread). Every tab and device of the user clears its badge.
$("#bell").addEventListener("click", () => {
  const newest = rows.newest();
  if (newest) void feed?.markRead(newest);
});
// Clicking one notification marks it read.
list.addEventListener("click", (e) => {
  const row = (e.target as Element).closest("li[data-testid=notification]");
  const item = row ? rows.itemOf(row) : undefined;
  if (item?.kind === "event") void feed?.markItemRead(item.event.eventId);
});

// The publish form's own token (the client's stays in its worker): from the demo's login,
// fetched on first use, again shortly before it expires or when the server refuses it.
let login: { token: string; expiresAt: number } | undefined;
async function loginToken(force: boolean): Promise<string> {
  if (force || !login || login.expiresAt - Date.now() < 5_000) {
    const res = await fetch("/api/login", { method: "POST" });
    if (!res.ok) throw new Error(`login: HTTP ${res.status}`);
    login = (await res.json()) as { token: string; expiresAt: number };
  }
  return login.token;
}
async function publishNote(body: string): Promise<Response> {
  const send = async (force: boolean) =>
    fetch("/api/publish", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await loginToken(force)}` },
      body,
    });
  const res = await send(false);
  // A token of an earlier server run (new secret) is refused once: log in again.
  return res.status === 401 ? send(true) : res;
}

$<HTMLFormElement>("#publish").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  void publishNote(JSON.stringify({ tenantId: tenant, text })).then(async (res) => {
    if (!res.ok) {
      refusedEl.hidden = false;
      refusedEl.textContent = `Publish refused: ${(await res.json().catch(() => ({}))).message ?? res.status}`;
    }
  }, (err: unknown) => {
    refusedEl.hidden = false;
    refusedEl.textContent = `Publish failed: ${String(err)}`;
  });
});

openFeed();
// For the end-to-end tests and the browser benchmark.
(window as unknown as { tidemark: unknown }).tidemark = { client, feed: () => feed };
