/**
 * The app's two topics, declared once and shared by the server and the worker. `lazySync`
 * binds them to the process's Sync: an embedded nats-server under `.tidemark/`, or the NATS
 * cluster of `TIDEMARK_NATS_URL`.
 */
import { lazySync } from "@tidemark/server";

/** An order, as the shop's checkout publishes it. */
export interface Order {
  orderId: string;
  item: string;
  quantity: number;
}

/** What a user's browser shows. */
export interface Notification {
  text: string;
  orderId: string;
}

/** Orders, one tenant per shop. Not exposed to browsers: the worker reads them. */
export const orders = lazySync((sync) => sync.topic<Order>({ id: "shop.orders" }));

/** Notifications, one tenant per shop. Exposed on the bridge to the shop's users. */
export const notifications = lazySync((sync) =>
  sync.topic<Notification>({
    id: "shop.notifications",
    retention: { maxAgeMs: 7 * 24 * 3600_000, maxBytes: 16 * 1024 * 1024 },
  }),
);
