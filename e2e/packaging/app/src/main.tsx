// A React app as a user writes it, from the packed tarballs: the client's SharedWorker comes
// out of node_modules through Vite's `new URL(…, import.meta.url)` detection.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createClient } from "@tidemark/client";
import { TidemarkProvider, useConnection, useFeed } from "@tidemark/react";

const client = createClient({ url: "/ws", getToken: () => "scratch-user" });

function Inbox() {
  const { items, status } = useFeed<{ text: string }>({ topic: "inbox", tenantId: "acme" });
  const connection = useConnection();
  return (
    <main>
      <p data-testid="status" data-status={status}>{status}</p>
      <p data-testid="tabs">{connection.tabs}</p>
      <p data-testid="transport">{client.state.transport}</p>
      <ul>
        {items.map((item) =>
          item.kind === "event" ? <li key={item.n} data-testid="event">{item.event.data.text}</li> : <li key={item.n}>gap</li>,
        )}
      </ul>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <TidemarkProvider client={client}>
      <Inbox />
    </TidemarkProvider>
  </StrictMode>,
);
