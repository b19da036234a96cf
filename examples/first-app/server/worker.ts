/**
 * The worker: a durable consumer of `orders` that turns each order into a notification for
 * the same shop. At least once: a crash after the publish and before the ack delivers the order
 * again, and the idempotency key makes that second publish store nothing.
 */
import type { Worker } from "@tidemark/server";
import { notifications, orders } from "./topics.js";

/** Starts the worker; `await worker.stop()` waits for a handler that is running. */
export function startOrderWorker(): Promise<Worker> {
  return orders().process(
    {
      consumer: "order-notifier",
      start: "earliest",
      // A throw is retried after 1 s, then 5 s; the third failure moves the order to the
      // consumer's dead-letter stream (orders().deadLetters({ consumer: "order-notifier" })).
      delivery: { maxAttempts: 3, backoffMs: [1_000, 5_000] },
    },
    async (event) => {
      const { orderId, item, quantity } = event.data;
      await notifications().publish({
        tenantId: event.tenantId,
        data: { orderId, text: `Order ${orderId}: ${quantity} × ${item} confirmed` },
        idempotencyKey: `confirmed:${event.eventId}`,
      });
    },
  );
}
