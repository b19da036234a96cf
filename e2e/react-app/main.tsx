/**
 * A small app on @tidemark/react for the e2e suite, in StrictMode. `?provider=options` lets the
 * provider make its client; by default it gets a real client wrapped to count the feeds that the
 * hooks open and close (`window.feedCounts`), which StrictMode's double effects must not double.
 */
import { StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";
import { createClient, type Client, type ClientOptions, type FeedSpec } from "@tidemark/client";
import { TidemarkProvider, useConnection, useFeed, useLiveFeed } from "@tidemark/react";

const params = new URLSearchParams(location.search);
const options: ClientOptions = {
  url: "/ws",
  // The demo gives a token only to a page that sends this header (another site cannot).
  getToken: async () => ((await (await fetch("/api/token", { headers: { "x-tidemark-demo": "1" } })).json()) as { token: string }).token,
  reconnect: { baseMs: 250, maxMs: 3_000 },
};

const feedCounts = { opens: 0, closes: 0 };
(window as unknown as { feedCounts: typeof feedCounts }).feedCounts = feedCounts;

function countingClient(real: Client): Client {
  return new Proxy(real, {
    get(target, key) {
      if (key === "feed") {
        return (spec: FeedSpec) => {
          feedCounts.opens++;
          const feed = target.feed(spec);
          const close = feed.close.bind(feed);
          feed.close = () => {
            feedCounts.closes++;
            close();
          };
          return feed;
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function Inbox({ tenantId }: { tenantId: string }) {
  const { items, status, error } = useFeed<{ text: string }>({ topic: "demo.notifications", tenantId });
  const live = useLiveFeed<{ text: string }>({ topic: "demo.notifications", tenantId });
  return (
    <section>
      <p data-testid="feed-status" data-status={status}>{status}{error ? ` ${error.code}` : ""}</p>
      <p data-testid="live-count">{live.items.length}</p>
      <ol>
        {items.map((item) =>
          item.kind === "event" ? (
            <li key={item.n} data-testid="event" data-event-id={item.event.eventId}>{item.event.data.text}</li>
          ) : (
            <li key={item.n} data-testid="gap">gap</li>
          ),
        )}
      </ol>
    </section>
  );
}

function App() {
  const [tenantId, setTenantId] = useState(params.get("tenant") ?? "acme");
  const { status, tabs } = useConnection();
  return (
    <main>
      <p data-testid="connection" data-status={status}>{status}</p>
      <p data-testid="tabs">{tabs}</p>
      <select data-testid="tenant" value={tenantId} onChange={(e) => setTenantId(e.target.value)}>
        <option>acme</option>
        <option>globex</option>
        <option>initech</option>
      </select>
      <Inbox tenantId={tenantId} />
    </main>
  );
}

const provider =
  params.get("provider") === "options" ? (
    <TidemarkProvider options={options}><App /></TidemarkProvider>
  ) : (
    <TidemarkProvider client={countingClient(createClient(options))}><App /></TidemarkProvider>
  );
createRoot(document.getElementById("root")!).render(<StrictMode>{provider}</StrictMode>);
