/**
 * The page: one TidemarkProvider, a feed of the shop's notifications, the connection's status,
 * and a button that places an order (the worker turns it into a notification).
 */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { TidemarkProvider, useConnection, useFeed } from "@tidemark/react";

const user = new URLSearchParams(location.search).get("user") ?? "ada";

function Notifications({ shop }: { shop: string }) {
  const { items, status, error } = useFeed<{ text: string }>({ topic: "shop.notifications", tenantId: shop });
  if (status === "loading") return <p>loading…</p>;
  // FORBIDDEN (not this user's shop), or the connection's ORIGIN_REFUSED / UNAUTHORIZED.
  if (status === "error") return <p role="alert">{error?.code}: {error?.message}</p>;
  return (
    <ol>
      {items.map((item) =>
        item.kind === "event" ? <li key={item.n}>{item.event.data.text}</li> : <li key={item.n}>some notifications may be missing here</li>,
      )}
    </ol>
  );
}

function Status() {
  const { status, tabs } = useConnection();
  return (
    <p>
      {status}, {tabs} {tabs === 1 ? "tab" : "tabs"} on one connection
    </p>
  );
}

async function order(shop: string): Promise<void> {
  await fetch("/api/orders", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ shop, item: "tide table", quantity: 1 }),
  });
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <TidemarkProvider options={{ url: "/ws", getToken: () => fetch(`/api/token?user=${user}`).then((r) => r.text()), principal: user }}>
      <h1>acme's notifications</h1>
      <Status />
      <button onClick={() => void order("acme")}>Order a tide table</button>
      <Notifications shop="acme" />
    </TidemarkProvider>
  </StrictMode>,
);
