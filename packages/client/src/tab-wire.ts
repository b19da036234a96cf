/**
 * How engine messages cross to a tab that runs elsewhere (the SharedWorker's tabs over comlink,
 * a leader's followers over BroadcastChannel). Two costs the profile showed, paid once here:
 * - a tab's messages of one task (the items of every feed in a flush, a status) cross as one
 *   packet, so a tab runs one task for them, not one per message;
 * - a batch of items goes to every tab of the feed; it is turned into one JSON string for all of
 *   them (items come from JSON frames, so nothing is lost), and each postMessage copies a string
 *   instead of walking the objects again. The tab parses it once.
 * - from the SharedWorker, packets go on a port of their own that the tab hands over at attach:
 *   one message each, which nothing answers (a comlink callback is a call the tab answers, a
 *   second message and a task in the worker per packet).
 * In-page engines (the leader's own tab, `direct`) call their listener directly and skip this.
 */
import type { FeedItem, TabMessage } from "./types.js";

/** @internal A message on the wire: items travel as JSON. */
export type WireMessage = Exclude<TabMessage, { type: "items" }> | { type: "items_json"; sub: string; json: string; effects: boolean };

/** @internal What one postMessage to a tab carries. */
export type Packet = WireMessage[];

/** One encoding per items array: a flush hands the same array to every tab of the feed. */
const encoded = new WeakMap<FeedItem[], string>();

function toWire(message: TabMessage): WireMessage {
  if (message.type !== "items") return message;
  let json = encoded.get(message.items);
  if (json === undefined) {
    json = JSON.stringify(message.items);
    encoded.set(message.items, json);
  }
  return { type: "items_json", sub: message.sub, json, effects: message.effects };
}

function fromWire(message: WireMessage): TabMessage {
  if (message.type !== "items_json") return message;
  return { type: "items", sub: message.sub, items: JSON.parse(message.json) as FeedItem[], effects: message.effects };
}

/**
 * @internal A tab's listener for the engine that sends what it gets during one task as one
 * packet (at the end of the task, in order).
 */
export function packer(send: (packet: Packet) => unknown): (message: TabMessage) => void {
  let queue: Packet | undefined;
  return (message) => {
    if (!queue) {
      const packet: Packet = (queue = []);
      queueMicrotask(() => {
        queue = undefined;
        try {
          // Over comlink this returns a promise that never settles for a dead tab: ignore it.
          const result = send(packet);
          if (result instanceof Promise) result.catch(() => undefined);
        } catch {
          // A tab that cannot be reached is dropped by the heartbeat sweep.
        }
      });
    }
    queue.push(toWire(message));
  };
}

/** @internal The engine's listener for a tab's own port (see {@link tabPort}): packets, one way. */
export function portSender(port: MessagePort): (message: TabMessage) => void {
  return packer((packet) => port.postMessage(packet));
}

/**
 * @internal The tab's side of its own port: `receive` gets each message of every packet, in
 * order. `remote` goes to the engine (transfer it); `close` when the tab attaches again or closes.
 */
export function tabPort(receive: (message: TabMessage) => void): { remote: MessagePort; close(): void } {
  const channel = new MessageChannel();
  const unpack = unpacker(receive);
  channel.port1.onmessage = (event: MessageEvent<Packet>) => unpack(event.data);
  return { remote: channel.port2, close: () => channel.port1.close() };
}

/** @internal The tab's side: each message of a packet, in order. */
export function unpacker(receive: (message: TabMessage) => void): (packet: Packet) => void {
  return (packet) => {
    for (const message of packet) receive(fromWire(message));
  };
}
